#!/usr/bin/python3
"""Writes test/fixtures/tokenizers/: two BPE tokenizers trained by Hugging Face's own
tokenizers library (the Rust one, Debian's python3-tokenizers), in the two layouts
pretrained models ship, and what that library makes of sample texts, for
test/bpe-tokenizer.test.ts to compare HuggingFaceTokenizer against.

  gpt2-style/tokenizer.json    byte-level BPE (GPT-2, GPT-NeoX, Llama 3, Qwen): every byte has a
                               token, spaces fold into the next word ("Ġworld"), <|endoftext|>
  llama-style/tokenizer.json   SentencePiece-style BPE (Llama 2, Mistral): "▁" for spaces, byte
                               fallback (<0x..>) for characters it never saw, <s> prepended
  expected.json                by tokenizer and sample: ids (special tokens added as the tokenizer
                               adds them), tokens, and the decoded text with and without specials

Run (python3-tokenizers is in Debian sid, not bookworm): in the sid chroot of
scripts/ci-libtorch-latest.sh, /usr/bin/python3 scripts/make-tokenizer-fixtures.py
"""
import json
import pathlib

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

OUT = pathlib.Path(__file__).resolve().parent.parent / "test" / "fixtures" / "tokenizers"

CORPUS = [
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs on.",
    "Training a model from TypeScript: forward, backward, step. Loss 0.25 at step 1000!",
    "def forward(self, x):\n    return self.head(self.body(x))  # 4 spaces of indent\n",
    "Tokenizers split text into pieces: words, sub-words, and bytes when nothing else fits.",
    "A café in Zürich serves crème brûlée; naïve résumés are déjà vu.",
    "Numbers like 3.14159, 2048 and 1e-5 appear in configs; so do URLs like https://example.com/a?b=c.",
] * 20

SAMPLES = [
    "The quick brown fox.",
    "Hello, world! A sentence the corpus never held, with unseen words: zyxwv.",
    "  leading spaces,\ttabs\nand newlines\n\n",
    "Emoji 🔥 and 漢字 fall back to bytes.",
    "<|endoftext|>two documents<|endoftext|>",
    "",
]


def gpt2_style():
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=420, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer


def llama_style():
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("(?=▁)"), "merged_with_next")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    bytes_ = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=520, special_tokens=["<unk>", "<s>", "</s>"] + bytes_, show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tokenizer.token_to_id("<s>"))])
    return tokenizer


def main():
    expected = {}
    for name, make in [("gpt2-style", gpt2_style), ("llama-style", llama_style)]:
        tokenizer = make()
        folder = OUT / name
        folder.mkdir(parents=True, exist_ok=True)
        tokenizer.save(str(folder / "tokenizer.json"))
        cases = []
        for text in SAMPLES:
            encoding = tokenizer.encode(text)
            cases.append({
                "text": text,
                "ids": encoding.ids,
                "tokens": encoding.tokens,
                "idsWithoutSpecial": tokenizer.encode(text, add_special_tokens=False).ids,
                "decoded": tokenizer.decode(encoding.ids, skip_special_tokens=False),
                "decodedWithoutSpecial": tokenizer.decode(encoding.ids, skip_special_tokens=True),
            })
        expected[name] = {"vocabSize": tokenizer.get_vocab_size(with_added_tokens=True), "cases": cases}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
