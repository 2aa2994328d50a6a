// ResNet-18 (torchvision's layout, CIFAR stem: a 3x3 first conv and no max pool)
// written as TypeScript modules, line for line the Python class of
// scripts/make-module-fixtures.py: same names, same construction order, same
// init, so a state dict moves between the two. test/modules-golden.test.ts
// checks it against PyTorch; examples/resnet-fashion-mnist.ts trains it.
import { F, Layer, nn, Sequential, Tensor } from '../../src';

export class BasicBlock extends nn.Module {
  conv1: Layer;
  bn1: Layer;
  conv2: Layer;
  bn2: Layer;
  downsample?: Sequential;

  constructor(inPlanes: number, planes: number, stride = 1) {
    super();
    this.conv1 = nn.conv2d(inPlanes, planes, 3, { stride, padding: 1, bias: false });
    this.bn1 = nn.batchNorm2d(planes);
    this.conv2 = nn.conv2d(planes, planes, 3, { padding: 1, bias: false });
    this.bn2 = nn.batchNorm2d(planes);
    if (stride !== 1 || inPlanes !== planes) {
      this.downsample = nn.sequential(nn.conv2d(inPlanes, planes, 1, { stride, bias: false }), nn.batchNorm2d(planes));
    }
  }

  forward(x: Tensor): Tensor {
    let out = F.relu(this.bn1.forward(this.conv1.forward(x)));
    out = this.bn2.forward(this.conv2.forward(out));
    const identity = this.downsample ? this.downsample.forward(x) : x;
    return F.relu(out.add(identity));
  }
}

export class ResNet18 extends nn.Module {
  conv1: Layer;
  bn1: Layer;
  layer1: Sequential;
  layer2: Sequential;
  layer3: Sequential;
  layer4: Sequential;
  fc: Layer;

  constructor({
    inChannels = 3,
    width = 64,
    numClasses = 10,
  }: { inChannels?: number; width?: number; numClasses?: number } = {}) {
    super();
    this.conv1 = nn.conv2d(inChannels, width, 3, { padding: 1, bias: false });
    this.bn1 = nn.batchNorm2d(width);
    const stage = (inPlanes: number, planes: number, stride: number) =>
      nn.sequential(new BasicBlock(inPlanes, planes, stride), new BasicBlock(planes, planes));
    this.layer1 = stage(width, width, 1);
    this.layer2 = stage(width, 2 * width, 2);
    this.layer3 = stage(2 * width, 4 * width, 2);
    this.layer4 = stage(4 * width, 8 * width, 2);
    this.fc = nn.linear(8 * width, numClasses);
    for (const m of this.modules()) {
      if (m instanceof Layer && m.type === 'conv2d') {
        nn.init.kaimingNormal_(m.weight, { mode: 'fan_out', nonlinearity: 'relu' });
      } else if (m instanceof Layer && m.type === 'batchNorm2d') {
        nn.init.constant_(m.weight, 1);
        nn.init.constant_(m.bias, 0);
      }
    }
  }

  forward(x: Tensor): Tensor {
    x = F.relu(this.bn1.forward(this.conv1.forward(x)));
    x = this.layer4.forward(this.layer3.forward(this.layer2.forward(this.layer1.forward(x))));
    return this.fc.forward(F.adaptiveAvgPool2d(x, 1).flatten(1));
  }
}
