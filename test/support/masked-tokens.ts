// Token windows whose targets are partly ignored (-100), as chat fine-tuning
// masks its prompts: samples that count different numbers of targets.
import { Dataset } from '../../src';
import { seededRandom } from './helpers';

const SAMPLES = 8;
const TIME = 8;

/**
 * `samples` sequences of 8 token ids whose targets are ignored (-100) before a prompt of 0..7 tokens, so the
 * samples count 8..1 targets in turn; `allIgnored` lists samples whose every target is ignored.
 */
export function maskedTokens(allIgnored: number[] = [], samples = SAMPLES): Dataset {
  const random = seededRandom(3);
  const inputs = Int32Array.from({ length: samples * TIME }, () => Math.floor(random() * 64));
  const targets = Int32Array.from({ length: samples * TIME }, () => Math.floor(random() * 64));
  for (let sample = 0; sample < samples; ++sample) {
    const prompt = allIgnored.includes(sample) ? TIME : (sample * 3) % TIME;
    for (let t = 0; t < prompt; ++t) targets[sample * TIME + t] = -100;
  }
  return Dataset.fromFields({
    input: { data: inputs, shape: [samples, TIME] },
    target: { data: targets, shape: [samples, TIME] },
  });
}
