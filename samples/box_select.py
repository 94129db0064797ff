"""Box selection by IoU score (MindSpore migration guide, "Dynamic Shape Workarounds").

Keeps the boxes whose IoU with the ground truth is above 0.3. In PyTorch the
result has one row per kept box, so its shape depends on the data.
"""
import torch


def box_select_torch(box, iou_score):
    mask = iou_score > 0.3
    return box[mask]
