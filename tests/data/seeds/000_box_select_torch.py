# Seed 000 "Dynamic Shape Workarounds" / Operations that Cause Shape Changes:
# box_select_torch and the torch half of the result comparison.
import torch
import numpy as np

def box_select_torch(box, iou_score):
    mask = iou_score > 0.3
    return box[mask]

box = np.random.uniform(0, 1, (3, 4)).astype(np.float32)
iou_score = np.random.uniform(0, 1, (3,)).astype(np.float32)

print("box_select_torch", box_select_torch(torch.from_numpy(box), torch.from_numpy(iou_score)))
