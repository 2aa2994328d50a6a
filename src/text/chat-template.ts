// Chat templates rendered as transformers' apply_chat_template renders them
// (render_jinja_template): the messages, tools, documents, add_generation_prompt,
// the special tokens and the caller's template variables in scope; the text cut
// after the final message's content when the reply continues it
// (continue_final_message); and the marks of {% generation %} blocks that tell
// the assistant's tokens apart.
import { Template } from '@huggingface/jinja';

import { firebrandError } from '../errors';
import { optionKeys } from '../options/option-keys';

/** A part of a message's content (OpenAI's and transformers' multimodal form): { type: 'text', text }, { type: 'image' }, ... */
export interface ChatContentPart {
  type: string;
  text?: string;
  [field: string]: unknown;
}

/** A chat message as chat templates read it; other fields (tool_calls, name, ...) pass to the template as they are. */
export interface ChatMessage {
  role: string;
  content: string | ChatContentPart[];
  [field: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the template's opening of the assistant's turn (transformers' add_generation_prompt). Default false. */
  addGenerationPrompt?: boolean;
  /**
   * The text ends with the final message's content, open for the model to continue it (a prefilled
   * reply), as transformers' continue_final_message. Not with addGenerationPrompt. Default false.
   */
  continueFinalMessage?: boolean;
  /** Tools as JSON schemas ({ type: 'function', function: { name, description, parameters } }), as the template lists them. */
  tools?: Record<string, unknown>[];
  /** Documents for retrieval-augmented templates: { title, text } each. */
  documents?: Record<string, unknown>[];
  /** Further variables the template reads (transformers' **kwargs, vLLM's chat_template_kwargs): { enable_thinking: false }. */
  chatTemplateKwargs?: Record<string, unknown>;
  /** A template to use instead of the tokenizer's own (transformers' chat_template). */
  chatTemplate?: string;
}

export const CHAT_TEMPLATE_OPTION_KEYS = optionKeys<ChatTemplateOptions & { tokenize?: boolean }>()([
  'addGenerationPrompt',
  'continueFinalMessage',
  'tools',
  'documents',
  'chatTemplateKwargs',
  'chatTemplate',
  'tokenize',
]);

/** Where the template's {% generation %} blocks start and end in the rendered text (private-use characters). */
export const GENERATION_START = '\uE000';
export const GENERATION_END = '\uE001';

/**
 * The template with {% generation %} and {% endgeneration %} (transformers' marks of the assistant's text)
 * writing marker characters instead, their whitespace control kept.
 */
export function markedGenerations(template: string): string {
  return template.replace(/{%(-?)\s*(end)?generation\s*(-?)%}/g, (_, lstrip: string, end: string, rstrip: string) => {
    const marker = end === undefined ? GENERATION_START : GENERATION_END;
    return `{{${lstrip} '${marker}' ${rstrip}}}`;
  });
}

/** transformers' mark after the final message's text, where a continued reply's text is cut. */
const CONTINUE_TAG = 'CONTINUE_FINAL_MESSAGE_TAG ';

/** The messages with CONTINUE_TAG after the final message's (last) text, and that text. */
function taggedFinalMessage(messages: ChatMessage[]): { tagged: ChatMessage[]; text: string } {
  const final = messages.at(-1);
  if (final === undefined) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'applyChatTemplate.continueFinalMessage: there are no messages',
    );
  }
  const { content } = final;
  if (typeof content === 'string') {
    return { tagged: [...messages.slice(0, -1), { ...final, content: content + CONTINUE_TAG }], text: content };
  }
  const texts = Array.isArray(content) ? content.map((part) => typeof part.text === 'string') : [];
  const at = texts.lastIndexOf(true);
  if (at < 0) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'applyChatTemplate.continueFinalMessage: the final message has no text to continue',
    );
  }
  const parts = content.map((part, i) => (i === at ? { ...part, text: `${part.text}${CONTINUE_TAG}` } : part));
  return { tagged: [...messages.slice(0, -1), { ...final, content: parts }], text: content[at].text as string };
}

/** `rendered` cut where CONTINUE_TAG is, as transformers cuts it (trailing space trimmed where the template moved it). */
function cutAtTag(rendered: string, text: string): string {
  if (!rendered.includes(text.trim()) || !rendered.includes(CONTINUE_TAG.trim())) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      `applyChatTemplate.continueFinalMessage: the chat template does not render the final message's text ${JSON.stringify(text.trim())}`,
    );
  }
  const at = rendered.lastIndexOf(CONTINUE_TAG.trim());
  return rendered.slice(at, at + CONTINUE_TAG.length) === CONTINUE_TAG
    ? rendered.slice(0, at)
    : rendered.slice(0, at).trimEnd();
}

/**
 * `template` rendered as transformers renders it: `messages`, `tools`, `documents` and
 * add_generation_prompt in scope with `specialTokens` (bos_token, ...) and the chatTemplateKwargs.
 */
export function renderChatTemplate(
  template: string,
  messages: ChatMessage[],
  specialTokens: Record<string, string>,
  options: ChatTemplateOptions,
): string {
  const { addGenerationPrompt = false, continueFinalMessage = false, tools, documents, chatTemplateKwargs } = options;
  if (continueFinalMessage && addGenerationPrompt) {
    throw firebrandError(
      'ERR_FIREBRAND_INVALID_ARGUMENT',
      'applyChatTemplate: continueFinalMessage and addGenerationPrompt exclude each other (the first continues the final message, the second opens a new one)',
    );
  }
  const { tagged, text } = continueFinalMessage ? taggedFinalMessage(messages) : { tagged: messages, text: '' };
  const rendered = new Template(template).render({
    ...specialTokens,
    ...chatTemplateKwargs,
    messages: tagged,
    tools: tools ?? null,
    documents: documents ?? null,
    add_generation_prompt: addGenerationPrompt,
  });
  return continueFinalMessage ? cutAtTag(rendered, text) : rendered;
}
