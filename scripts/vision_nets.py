"""The two small networks of the tile recogniser, in PyTorch (training only; run time uses ONNX).

Both normalise their own input (pixels in [0, 1]) so the exported models need no
preprocessing constants outside them, and both use plain 3x3 convolutions, which are fast on
one CPU core at these sizes.
"""

from __future__ import annotations

import torch
from torch import nn

from vision.classes import NUM_CLASSES


def conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Normalise(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - 0.5) / 0.25


class TileDetector(nn.Module):
    """Backbone to stride 32, top-down feature pyramid back to stride 4, one shared head.

    Output channels: centre heat (sigmoid), log(width / unit), log(height / unit), dx, dy.
    """

    def __init__(self, width: int = 48) -> None:
        super().__init__()
        self.normalise = Normalise()
        self.c2 = nn.Sequential(conv(3, 16, 2), conv(16, 24, 2), conv(24, 24))
        self.c3 = nn.Sequential(conv(24, 48, 2), conv(48, 48))
        self.c4 = nn.Sequential(conv(48, 64, 2), conv(64, 64))
        self.c5 = nn.Sequential(conv(64, 96, 2), conv(96, 96), conv(96, 96))
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in (24, 48, 64, 96))
        self.smooth = conv(width, width)
        self.head = nn.Sequential(conv(width, 32), nn.Conv2d(32, 5, 1))
        nn.init.constant_(self.head[1].bias[:1], -2.19)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c2 = self.c2(self.normalise(x))
        c3 = self.c3(c2)
        c4 = self.c4(c3)
        c5 = self.c5(c4)
        feature = self.lateral[3](c5)
        for level, lateral in ((c4, self.lateral[2]), (c3, self.lateral[1]), (c2, self.lateral[0])):
            feature = lateral(level) + nn.functional.interpolate(feature, size=level.shape[-2:], mode="nearest")
        out = self.head(self.smooth(feature))
        return torch.cat([torch.sigmoid(out[:, :1]), out[:, 1:]], dim=1)


class TileClassifier(nn.Module):
    """Crop (3 x 64 x 48) to NUM_CLASSES logits (27 suited tiles, "not a suited tile") and one more:
    the logit of "the crop shows the tile upright" (not upside down)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            Normalise(),
            conv(3, 32),
            conv(32, 32, 2),
            conv(32, 64),
            conv(64, 64, 2),
            conv(64, 128),
            conv(128, 128, 2),
            conv(128, 128),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dropout(0.2),
            nn.Linear(128, NUM_CLASSES + 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


class FastTileClassifier(nn.Module):
    """The same crops and outputs as ``TileClassifier``, wider and deeper but cheaper to train.

    The first convolution already halves the crop (a 48 px wide crop is mostly a tile scaled up
    from 16-60 px, so little detail is lost), which leaves room for four stages of two
    convolutions, 32 to 192 channels, at about 40% of ``TileClassifier``'s arithmetic: trained
    from scratch on one core it sees about twice as many crops per minute.
    """

    def __init__(self, widths: tuple[int, int, int, int] = (32, 64, 128, 192)) -> None:
        super().__init__()
        layers: list[nn.Module] = [Normalise()]
        previous = 3
        for width in widths:
            layers += [conv(previous, width, 2), conv(width, width)]
            previous = width
        self.features = nn.Sequential(
            *layers,
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dropout(0.2),
            nn.Linear(previous, NUM_CLASSES + 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)


class Calibrated(nn.Module):
    """The classifier with its class logits divided by a fitted temperature (the exported model)."""

    def __init__(self, model: nn.Module, temperature: float) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("scale", torch.tensor([1.0 / temperature] * NUM_CLASSES + [1.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x) * self.scale
