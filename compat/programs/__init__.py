"""The compatibility programs, grouped by the tutorials they are modelled on."""
