// A two-level U-Net written as TypeScript modules, line for line the Python
// class of scripts/make-module-fixtures.py: max-pool down, transposed
// convolutions up, skips concatenated along channels, GroupNorm.
import { FunctionalLayer, Layer, nn, Sequential, Tensor, torch } from '../../src';

class DoubleConv extends nn.Module {
  block: Sequential;

  constructor(inChannels: number, outChannels: number, groups = 4) {
    super();
    this.block = nn.sequential(
      nn.conv2d(inChannels, outChannels, 3, { padding: 1 }),
      nn.groupNorm(groups, outChannels),
      nn.silu(),
      nn.conv2d(outChannels, outChannels, 3, { padding: 1 }),
      nn.groupNorm(groups, outChannels),
      nn.silu(),
    );
  }

  forward(x: Tensor): Tensor {
    return this.block.forward(x);
  }
}

export class UNet extends nn.Module {
  enc1: DoubleConv;
  enc2: DoubleConv;
  bottleneck: DoubleConv;
  pool: FunctionalLayer;
  up2: Layer;
  dec2: DoubleConv;
  up1: Layer;
  dec1: DoubleConv;
  head: Layer;

  constructor(inChannels = 3, classes = 2, width = 8) {
    super();
    this.enc1 = new DoubleConv(inChannels, width);
    this.enc2 = new DoubleConv(width, 2 * width);
    this.bottleneck = new DoubleConv(2 * width, 4 * width);
    this.pool = nn.maxPool2d(2);
    this.up2 = nn.convTranspose2d(4 * width, 2 * width, 2, { stride: 2 });
    this.dec2 = new DoubleConv(4 * width, 2 * width);
    this.up1 = nn.convTranspose2d(2 * width, width, 2, { stride: 2 });
    this.dec1 = new DoubleConv(2 * width, width);
    this.head = nn.conv2d(width, classes, 1);
  }

  forward(x: Tensor): Tensor {
    const e1 = this.enc1.forward(x);
    const e2 = this.enc2.forward(this.pool.forward(e1));
    const b = this.bottleneck.forward(this.pool.forward(e2));
    const d2 = this.dec2.forward(torch.cat([this.up2.forward(b), e2], 1));
    const d1 = this.dec1.forward(torch.cat([this.up1.forward(d2), e1], 1));
    return this.head.forward(d1);
  }
}
