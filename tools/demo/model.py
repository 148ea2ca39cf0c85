"""TinyDet: a small anchor-free, single-scale (stride 8) detector for the demo (needs torch).

Input: (B, 3, S, S) float RGB in [0, 1] (letterboxed, see :func:`tools.demo.scenes.letterbox`).
Output (Ultralytics layout): (B, 4 + C, (S/8)^2); rows 0..3 are cx, cy, w, h in input
pixels, rows 4.. are per-class sigmoid scores; column n is grid cell (row n // G, col n % G).

Decoding per cell (gx, gy) with raw outputs (tx, ty, tw, th):
``cx = 8 * (gx + 0.5 + 3 * (sigmoid(tx) - 0.5))`` (same for cy) and ``w = 8 * exp(tw)``.
Only Conv, Relu, Resize (nearest x2), Concat, Sigmoid, Exp, Mul, Add, Sub and Reshape
appear in the exported graph (BatchNorm is folded into the convolutions before export).
"""
from __future__ import annotations

import torch
from torch import nn

STRIDE = 8


def conv_bn(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class TinyDet(nn.Module):
    """Backbone to stride 16, one top-down merge into stride 8, a shared 3x3 head."""

    def __init__(self, num_classes: int, *, size: int = 320, width: int = 32):
        super().__init__()
        c1, c2, c3, c4 = width // 2, width, width * 2, width * 4
        self.num_classes, self.size = num_classes, size
        self.stem = nn.Sequential(conv_bn(3, c1, 2), conv_bn(c1, c2, 2), conv_bn(c2, c2))
        self.s8 = nn.Sequential(conv_bn(c2, c3, 2), conv_bn(c3, c3), conv_bn(c3, c3))
        self.s16 = nn.Sequential(conv_bn(c3, c4, 2), conv_bn(c4, c4), conv_bn(c4, c4))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.neck = nn.Sequential(conv_bn(c3 + c4, c3 + c3 // 2), conv_bn(c3 + c3 // 2, c3))
        self.head = conv_bn(c3, c3)
        self.box = nn.Conv2d(c3, 4, 1)
        self.cls = nn.Conv2d(c3, num_classes, 1)
        g = size // STRIDE
        ticks = torch.arange(g, dtype=torch.float32)
        ys, xs = torch.meshgrid(ticks, ticks, indexing="ij")
        self.register_buffer("grid", torch.stack([xs, ys])[None] + 0.5, persistent=False)  # (1, 2, G, G)
        nn.init.constant_(self.cls.bias, -4.6)  # prior 0.01
        nn.init.zeros_(self.box.weight)
        with torch.no_grad():
            self.box.bias.copy_(torch.tensor([0.0, 0.0, 0.7, 0.7]))  # ~16 px boxes at start

    def raw(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(box raw (B, 4, G, G), class logits (B, C, G, G))."""
        f8 = self.s8(self.stem(x))
        f16 = self.s16(f8)
        f = self.head(self.neck(torch.cat([f8, self.up(f16)], 1)))
        return self.box(f), self.cls(f)

    @staticmethod
    def decode(box: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        """(B, 4, G, G) cx, cy, w, h in input pixels."""
        xy = (grid + 3.0 * (torch.sigmoid(box[:, :2]) - 0.5)) * STRIDE
        wh = torch.exp(box[:, 2:]) * STRIDE
        return torch.cat([xy, wh], 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        box, cls = self.raw(x)
        out = torch.cat([self.decode(box, self.grid), torch.sigmoid(cls)], 1)
        return out.reshape(out.shape[0], 4 + self.num_classes, -1)


def fuse_for_export(model: TinyDet) -> TinyDet:
    """Fold every Conv+BatchNorm pair in place (eval mode) so the graph has plain Conv."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    model.eval()
    for mod in model.modules():
        if isinstance(mod, nn.Sequential) and len(mod) == 3 and isinstance(mod[1], nn.BatchNorm2d):
            mod[0] = fuse_conv_bn_eval(mod[0], mod[1])
            mod[1] = nn.Identity()
    return model
