"""Issue 34: ``vizgrad demo``'s arguments are checked by the parser (a usage error, exit status 2,
no traceback)."""

import pytest

from vizgrad import cli


@pytest.mark.parametrize("arguments, message", [
    (["--lr", "nan"], "--lr: must be a positive finite number, got nan"),
    (["--lr", "inf"], "--lr: must be a positive finite number"),
    (["--lr", "-0.5"], "--lr: must be a positive finite number"),
    (["--lr", "fast"], "--lr: must be a number, got 'fast'"),
    (["--out", "."], "--out: '.' is a directory"),
    (["--out", "no/such/folder/report.html"], "does not exist"),
])
def test_bad_demo_arguments_are_usage_errors(capsys, arguments, message):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["demo", "--steps", "2", *arguments])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


def test_a_good_learning_rate_and_report_path_are_kept(tmp_path):
    args = cli.build_parser().parse_args(["demo", "--lr", "0.25", "--out", str(tmp_path / "r.html")])
    assert args.lr == 0.25 and args.out == str(tmp_path / "r.html")
