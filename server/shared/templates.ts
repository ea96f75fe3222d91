/**
 * Saved-reply templates (docs/api.md#saved-replies): `{{ variable }}` placeholders from a fixed
 * list, resolved against one recipient. Shared by the services (saving, REST sends) and the
 * inbox's composer (what still blocks sending), so both read a placeholder the same way. Pure and
 * browser-safe: no imports. Parsed by scanning, not by a regular expression, so any input costs
 * linear time.
 */

/** The variables a saved reply may use, in the order the docs and the settings page list them. */
export const TEMPLATE_VARIABLES = [
  'client.first_name',
  'client.name',
  'location.name',
  'location.phone',
  'staff.first_name',
  'business.name',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** What each variable stands for, for the settings page and the docs. */
export const TEMPLATE_VARIABLE_HELP: Record<TemplateVariable, string> = {
  'client.first_name': "The client's first name (the first word of their name)",
  'client.name': "The client's full name",
  'location.name': "The client's location, or the business's only location",
  'location.phone': "That location's phone number",
  'staff.first_name': 'The first name of the staff member sending',
  'business.name': "The business's name",
};

/** A saved reply for SMS or any channel must fit one SMS body (docs/api.md#limits). */
export const MAX_SAVED_REPLY_SMS_BODY = 1600;
/** An email-only saved reply: long enough for a full email, short enough to edit in a text box. */
export const MAX_SAVED_REPLY_EMAIL_BODY = 20_000;
export const MAX_SAVED_REPLY_TITLE = 100;
export const MAX_SAVED_REPLY_SUBJECT = 998;
/** The channels a saved reply may be limited to; null means any. */
export const SAVED_REPLY_CHANNELS = ['sms', 'email'] as const;
export type SavedReplyChannel = (typeof SAVED_REPLY_CHANNELS)[number];

/** The longest name between the braces that is read as a placeholder; longer runs stay plain text. */
const MAX_PLACEHOLDER_NAME = 64;

export type TemplateContext = Partial<Record<TemplateVariable, string | null | undefined>>;

type Segment = { kind: 'text'; text: string } | { kind: 'placeholder'; raw: string; name: string };

const isKnown = (name: string): name is TemplateVariable => (TEMPLATE_VARIABLES as readonly string[]).includes(name);

/**
 * Splits a template into text and placeholders. A placeholder is `{{`, a name of 1 to 64
 * characters without braces or line breaks (spaces around it tolerated), then `}}`; anything else
 * (a lone `{{`, braces inside) is plain text. Names are case-sensitive.
 */
export function parseTemplate(template: string): Segment[] {
  const segments: Segment[] = [];
  let textStart = 0;
  let at = template.indexOf('{{');
  while (at !== -1) {
    // Only a bounded window after `{{` is searched for the closing `}}`, so a text full of `{{`
    // without closings is still read in linear time.
    const window = template.slice(at + 2, at + 2 + MAX_PLACEHOLDER_NAME + 2);
    const close = window.indexOf('}}');
    const inner = close === -1 ? '' : window.slice(0, close);
    const name = inner.trim();
    if (close !== -1 && name.length > 0 && !/[{}\r\n]/.test(inner)) {
      if (at > textStart) segments.push({ kind: 'text', text: template.slice(textStart, at) });
      const end = at + 2 + close + 2;
      segments.push({ kind: 'placeholder', raw: template.slice(at, end), name });
      textStart = end;
      at = template.indexOf('{{', end);
    } else {
      at = template.indexOf('{{', at + 1);
    }
  }
  if (textStart < template.length) segments.push({ kind: 'text', text: template.slice(textStart) });
  return segments;
}

/** Placeholder names in a template that are not variables, each once, in order of appearance. */
export function unknownVariables(template: string): string[] {
  const names = parseTemplate(template).flatMap((s) => (s.kind === 'placeholder' && !isKnown(s.name) ? [s.name] : []));
  return [...new Set(names)];
}

/** Every placeholder left in a text, known or not, each once: what keeps the composer from sending. */
export function placeholdersIn(text: string): string[] {
  return [...new Set(parseTemplate(text).flatMap((s) => (s.kind === 'placeholder' ? [s.name] : [])))];
}

/**
 * Variables still unresolved in a text about to be sent (what a saved reply left for staff to
 * fill in), each once. Unknown names are not counted: a saved reply cannot hold one, and staff may
 * type braces of their own.
 */
export function unresolvedVariables(text: string): TemplateVariable[] {
  return placeholdersIn(text).filter(isKnown);
}

/** The sentence the composer shows and a send is refused with while variables are unresolved. */
export function unresolvedMessage(variables: readonly string[]): string {
  const list = variables.map((v) => `{{${v}}}`).join(', ');
  return `Replace ${list} before sending: there is no value for ${variables.length > 1 ? 'them' : 'it'} in this conversation.`;
}

export type Resolved = {
  text: string;
  /** Variables with no value for this recipient: left in the text as `{{name}}`. */
  missing: TemplateVariable[];
  /** Names that are no variable at all: left as written. */
  unknown: string[];
};

/**
 * The template with each variable replaced by its value in `context`. A variable without a value
 * (null, undefined or blank) stays visible as `{{name}}` and is listed in `missing`, so the text
 * cannot be mistaken for finished; an unknown name stays as written and is listed in `unknown`.
 */
export function resolveTemplate(template: string, context: TemplateContext): Resolved {
  const missing = new Set<TemplateVariable>();
  const unknown = new Set<string>();
  const text = parseTemplate(template)
    .map((s) => {
      if (s.kind === 'text') return s.text;
      if (!isKnown(s.name)) {
        unknown.add(s.name);
        return s.raw;
      }
      const value = context[s.name]?.trim();
      if (!value) {
        missing.add(s.name);
        return `{{${s.name}}}`;
      }
      return value;
    })
    .join('');
  return { text, missing: [...missing], unknown: [...unknown] };
}

/** The first word of a name, or null when there is none. */
export function firstName(name: string | null | undefined): string | null {
  const trimmed = name?.trim();
  if (!trimmed) return null;
  const space = trimmed.search(/\s/);
  return space === -1 ? trimmed : trimmed.slice(0, space);
}
