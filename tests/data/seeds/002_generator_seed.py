# Seed 002 "seed & generator": a torch.Generator seeded by hand, the default
# generator seeded with torch.manual_seed, and one generator's state copied to
# another (the last two are quoted in the page's prose).
import torch

G = torch.Generator()
G.manual_seed(1)

torch.manual_seed(1)

g1 = torch.Generator()
g1.manual_seed(1)
g2 = torch.Generator()
g2.set_state(g1.get_state())
