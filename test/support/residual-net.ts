// Residual sums after convolutions (test/residual-fusion.test.ts): a ResNet block's (its downsampling branch a
// convolution too, the ReLU after the sum), a MobileNetV3 block's (the input added, no activation), a sum whose
// residual broadcasts, and one whose convolution another op reads too.
import { nn, type Tensor } from '../../src';

export const SHAPE = [2, 6, 10, 10];

export class ResidualNet extends nn.Module {
  conv1 = nn.conv2d(6, 8, 3, { padding: 1, bias: false });
  bn1 = nn.batchNorm2d(8);
  conv2 = nn.conv2d(8, 8, 3, { padding: 1, bias: false });
  bn2 = nn.batchNorm2d(8);
  downsample = nn.conv2d(6, 8, 1, { bias: false });
  downsampleNorm = nn.batchNorm2d(8);
  expand = nn.conv2d(8, 16, 1);
  project = nn.conv2d(16, 8, 1);
  broadcastBy = nn.conv2d(8, 8, 1);
  readTwice = nn.conv2d(8, 8, 1);
  forward(x: Tensor): Tensor[] {
    const block = this.bn2.forward(this.conv2.forward(this.bn1.forward(this.conv1.forward(x)).relu()));
    const a = block.add(this.downsampleNorm.forward(this.downsample.forward(x))).relu();
    const b = this.project.forward(this.expand.forward(a).relu()).add(a);
    const c = this.broadcastBy.forward(b).add(b.narrow(2, 0, 1).narrow(3, 0, 1));
    const twice = this.readTwice.forward(c);
    return [a, b, c, twice.add(c).mul(twice)];
  }
}

export const residualInputs = (batch: number) =>
  Float32Array.from({ length: batch * SHAPE.slice(1).reduce((x, y) => x * y, 1) }, (_, i) => Math.sin(i * 0.7) * 2);
