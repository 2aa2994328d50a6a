// Subclass style: the trainer configures its own model, optimizer and data, and
// the model is TorchScript with its own training_step and validation_step.
//   npm run build:ts && node dist/examples/subclass-torchscript.js   (EXAMPLE_EPOCHS, default 20)
// In your project, import from 'firebrand' instead of '../src'.
import {
  DataloaderConfiguration,
  Dataset,
  ModelConfiguration,
  nn,
  OptimizerConfiguration,
  Trainer,
  ValidationLogs,
} from '../src';
import { exampleSize } from './shared/example-size';
import { seededRandom } from './shared/seeded-random';

// y = sin(3x) + noise: a small network with a Huber-loss training_step.
const SOURCE = `
def forward(self, x):
    hidden = torch.tanh(x.unsqueeze(1) * self.w1 + self.b1)
    return (hidden * self.w2).sum(1) + self.b2

def training_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    error = self.forward(batch["input"]) - batch["target"]
    size = error.abs()
    huber = torch.where(size < 1.0, 0.5 * error * error, size - 0.5).mean()
    return {"loss": huber, "mae": size.mean()}

def validation_step(self, batch: Dict[str, Tensor]) -> Dict[str, Tensor]:
    error = self.forward(batch["input"]) - batch["target"]
    return {"loss": (error * error).mean()}
`;

function sineData(samples: number, seed: number): Dataset {
  const random = seededRandom(seed);
  const x = new Float32Array(samples).map(() => random() * 2 - 1);
  const y = x.map((value) => Math.sin(3 * value) + (random() - 0.5) * 0.1);
  return Dataset.fromArrays({ inputs: x, inputShape: [samples], targets: y });
}

function initial(count: number, scale: number, seed: number): Float32Array {
  return new Float32Array(count).map((_, i) => Math.sin(seed + i * 12.9898) * scale);
}

class SineTrainer extends Trainer {
  override configureModels(): ModelConfiguration {
    const hidden = 32;
    return {
      model: nn.script(SOURCE, [
        { name: 'w1', data: initial(hidden, 2, 1), shape: [hidden] },
        { name: 'b1', data: initial(hidden, 1, 2), shape: [hidden] },
        { name: 'w2', data: initial(hidden, 0.3, 3), shape: [hidden] },
        { name: 'b2', data: new Float32Array([0]), shape: [1] },
      ]),
    };
  }

  override configureOptimizers(): OptimizerConfiguration {
    return { optimizer: { name: 'adam', lr: 0.02 }, lrScheduler: { name: 'step', stepSize: 200, gamma: 0.5 } };
  }

  override configureDataloaders(): DataloaderConfiguration {
    return { train: sineData(1024, 1), eval: sineData(256, 2) };
  }

  override postValidation(logs: ValidationLogs): void {
    console.log(`epoch ${logs.epoch + 1}: validation mse ${logs.valLoss.toFixed(5)}`);
  }
}

async function main(): Promise<void> {
  const trainer = new SineTrainer({
    config: { numEpochs: exampleSize('EXAMPLE_EPOCHS', 20), batchSize: 64, progressBar: false },
  });
  const history = await trainer.fit();
  console.log(`best validation mse ${history.best?.value.toFixed(5)} at epoch ${(history.best?.epoch ?? 0) + 1}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
