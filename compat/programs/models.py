"""Small models in the style of well-known tutorials: a GPT block written from tensors (the
"let's build GPT" lecture), one built from nn.MultiheadAttention, REINFORCE on a tiny
environment, a WGAN-GP gradient penalty (create_graph), a VAE step and an LSTM
character model."""

import numpy as np

from ..suite import program


def _load(model, rng, torch, scale=0.3):
    """Give every parameter of ``model`` NumPy-drawn values (in named_parameters order)."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("bias") or ".norm" in name or name.startswith("ln"):
                values = rng.standard_normal(tuple(parameter.shape)) * 0.05 + ("weight" in name)
            else:
                values = rng.standard_normal(tuple(parameter.shape)) * scale
            parameter.copy_(torch.tensor(values, dtype=parameter.dtype))


def _expect_training(r):
    assert np.isfinite(r["losses"]).all() and r["losses"][-1] < r["losses"][0]


@program("Let's build GPT: a causal self-attention block from tensors", expect=_expect_training)
def tiny_gpt(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    vocab, block_size, n_embd, n_head = 12, 8, 16, 4

    class Head(nn.Module):
        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            return wei @ self.value(x)

    class MultiHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head(n_embd // n_head) for _ in range(n_head)])
            self.proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa = MultiHead()
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    model = GPT()
    _load(model, rng, torch)
    data = torch.tensor([i % vocab for i in range(200)])        # a cyclic text: learnable in a few steps
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for step in range(10):
        starts = rng.integers(0, len(data) - block_size - 1, 4)
        xb = torch.stack([data[i:i + block_size] for i in starts])
        yb = torch.stack([data[i + 1:i + block_size + 1] for i in starts])
        logits, loss = model(xb, yb)
        losses.append(loss.item())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    total = sum(p.numel() for p in model.parameters())
    logits, _ = model(torch.zeros((1, 1), dtype=torch.long))
    return {"losses": losses, "parameters": total, "next_token_probs": F.softmax(logits[:, -1, :], dim=-1),
            "lm_head_grad_norm": model.lm_head.weight.grad.norm().item()}


@program("a transformer encoder from nn.TransformerEncoderLayer (norm_first, causal mask)", expect=_expect_training)
def transformer_encoder(torch, rng):
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, dim_feedforward=32, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
    model = nn.ModuleDict({"embed": nn.Embedding(10, 16), "encoder": nn.TransformerEncoder(layer, 2,
                                                                                          enable_nested_tensor=False),
                           "head": nn.Linear(16, 10)})
    _load(model, rng, torch)
    mask = nn.Transformer.generate_square_subsequent_mask(6)
    tokens = torch.tensor(rng.integers(0, 10, (3, 7)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(6):
        hidden = model["encoder"](model["embed"](tokens[:, :-1]), mask=mask, is_causal=True)
        logits = model["head"](hidden)
        loss = nn.functional.cross_entropy(logits.reshape(-1, 10), tokens[:, 1:].reshape(-1))
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    attention = nn.MultiheadAttention(16, 4, batch_first=True)
    _load(attention, rng, torch)
    x = model["embed"](tokens)
    _, weights = attention(x, x, x, key_padding_mask=tokens == 0)
    return {"losses": losses, "attention_weights": weights}


def _expect_reinforce(r):
    assert r["final_probs"][1] > r["first_probs"][1]    # learns to prefer stepping right, towards the goal


@program("PyTorch's REINFORCE example on a corridor environment written here", expect=_expect_reinforce)
def reinforce(torch, rng):
    """A 1-D corridor of 5 cells; reward 1 for reaching the right end within 8 steps."""
    nn = torch.nn

    class Corridor:
        def reset(self):
            self.position, self.steps = 2, 0
            return self.state()

        def state(self):
            return [1.0 if i == self.position else 0.0 for i in range(5)]

        def step(self, action):
            self.position = max(0, min(4, self.position + (1 if action == 1 else -1)))
            self.steps += 1
            done = self.position == 4 or self.steps == 8
            return self.state(), float(self.position == 4), done

    policy = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 2))
    _load(policy, rng, torch)
    optimizer = torch.optim.Adam(policy.parameters(), lr=3e-2)
    env, gamma = Corridor(), 0.9
    start = torch.tensor([env.reset()])
    first_probs = torch.softmax(policy(start), -1)[0].detach()
    episode_returns = []
    for episode in range(30):
        state, log_probs, rewards, done = env.reset(), [], [], False
        while not done:
            probs = torch.softmax(policy(torch.tensor([state])), -1)
            m = torch.distributions.Categorical(probs)
            # the action is drawn with NumPy from the policy's probabilities (the libraries' RNGs differ)
            p = probs.detach().numpy()[0].astype(np.float64)
            action = torch.tensor([int(rng.random() < p[1] / p.sum())])
            log_probs.append(m.log_prob(action))
            state, reward, done = env.step(action.item())
            rewards.append(reward)
        returns, R = [], 0.0
        for r in reversed(rewards):
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        loss = torch.cat([-lp * R for lp, R in zip(log_probs, returns)]).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        episode_returns.append(sum(rewards))
        entropy = m.entropy()
    final_probs = torch.softmax(policy(start), -1)[0]
    return {"first_probs": first_probs, "final_probs": final_probs, "episode_returns": episode_returns,
            "last_entropy": entropy}


def _expect_gradient_penalty(r):
    assert r["gradient_penalty"] >= 0 and r["critic_grad_norm"] > 0


@program("WGAN-GP: the gradient penalty with create_graph", expect=_expect_gradient_penalty)
def wgan_gp(torch, rng):
    nn = torch.nn
    critic = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.LeakyReLU(0.2),
                           nn.Linear(16, 1))
    _load(critic, rng, torch)
    real = torch.tensor(rng.standard_normal((8, 4)), dtype=torch.float32)
    fake = torch.tensor(rng.standard_normal((8, 4)) + 1.0, dtype=torch.float32)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    penalties = []
    for step in range(3):
        alpha = torch.tensor(rng.random((8, 1)), dtype=torch.float32)
        interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        d_interpolates = critic(interpolates)
        gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                        grad_outputs=torch.ones_like(d_interpolates),
                                        create_graph=True, retain_graph=True, only_inputs=True)[0]
        gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gradient_penalty
        optimizer.zero_grad()
        loss.backward()
        penalties.append(gradient_penalty.item())
        optimizer.step()
    norm = torch.sqrt(sum((p.grad ** 2).sum() for p in critic.parameters()))
    return {"penalties": penalties, "gradient_penalty": penalties[-1], "critic_grad_norm": norm.item(),
            "last_loss": loss.item()}


def _expect_vae(r):
    assert r["losses"][-1] < r["losses"][0] and r["kl_terms_agree"] < 1e-4


@program("PyTorch's VAE example: reparameterisation, BCE + KL, Adam steps", expect=_expect_vae)
def vae_step(torch, rng):
    nn, F, distributions = torch.nn, torch.nn.functional, torch.distributions

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc21 = nn.Linear(12, 3)
            self.fc22 = nn.Linear(12, 3)
            self.fc3 = nn.Linear(3, 12)
            self.fc4 = nn.Linear(12, 16)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD, KLD

    model = VAE()
    _load(model, rng, torch)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = torch.tensor((rng.random((10, 1, 4, 4)) > 0.5).astype(np.float32))
    losses = []
    for step in range(5):
        eps = torch.tensor(rng.standard_normal((10, 3)), dtype=torch.float32)   # torch.randn_like(std)
        recon, mu, logvar = model(data, eps)
        loss, kld = loss_function(recon, data, mu, logvar)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    q = distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
    kl = distributions.kl_divergence(q, p).sum()
    z = q.rsample()
    log_likelihood = distributions.Independent(q, 1).log_prob(mu.detach())
    return {"losses": losses, "kl_terms_agree": abs(kl.item() - kld.item()) / abs(kld.item()),
            "rsample_shape": list(z.shape), "log_likelihood_at_mean": log_likelihood,
            "fc1_grad": model.fc1.weight.grad}


def _expect_lstm(r):
    assert r["output_shape"] == [4, 6, 10] and r["losses"][-1] < r["losses"][0]


@program("PyTorch's sequence-models tutorial: an LSTM over characters", expect=_expect_lstm)
def lstm_characters(torch, rng):
    nn = torch.nn

    class CharModel(nn.Module):
        def __init__(self, vocab=7, embed=5, hidden=10):
            super().__init__()
            self.embed = nn.Embedding(vocab, embed)
            self.lstm = nn.LSTM(embed, hidden, num_layers=2, batch_first=True)
            self.gru_cell = nn.GRUCell(hidden, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, x):
            output, (h_n, c_n) = self.lstm(self.embed(x))
            refined = self.gru_cell(output[:, -1], h_n[-1])
            return self.out(output), output, self.out(refined)

    model = CharModel()
    _load(model, rng, torch)
    tokens = torch.tensor(rng.integers(0, 7, (4, 7)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for step in range(5):
        logits, output, last = model(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 7), tokens[:, 1:].reshape(-1)) + \
            nn.functional.cross_entropy(last, tokens[:, -1])
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    rnn = nn.RNN(3, 4, bidirectional=True)
    _load(rnn, rng, torch)
    sequence = torch.tensor(rng.standard_normal((5, 3)), dtype=torch.float32)    # unbatched
    rnn_out, rnn_h = rnn(sequence)
    return {"losses": losses, "output_shape": list(output.shape), "lstm_grad": model.lstm.weight_hh_l1.grad,
            "rnn_out": rnn_out, "rnn_h": rnn_h}
