"""A distribution head as VAEs and policies write it: a diagonal Gaussian posterior over
a latent (Independent(Normal)), its KL divergence to a standard normal prior, and a
categorical policy over actions from logits."""
import torch
import torch.nn as nn
from torch.distributions import Categorical, Independent, Normal, kl_divergence


class DistributionHead(nn.Module):
    def __init__(self, in_dim=8, latent=4, actions=5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 16), nn.Tanh())
        self.mu = nn.Linear(16, latent)
        self.log_std = nn.Linear(16, latent)
        self.logits = nn.Linear(16, actions)

    def forward(self, x, z, action):
        h = self.body(x)
        std = self.log_std(h).clamp(-5.0, 2.0).exp()
        posterior = Independent(Normal(self.mu(h), std), 1)
        prior = Independent(Normal(torch.zeros_like(std), torch.ones_like(std)), 1)
        policy = Categorical(logits=self.logits(h))
        log_p = posterior.log_prob(z)
        kl = kl_divergence(posterior, prior)
        return log_p - kl, policy.log_prob(action), policy.entropy(), posterior.mean, posterior.stddev
