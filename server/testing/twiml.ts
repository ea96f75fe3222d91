import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * TwiML as Twilio reads it: the answer is parsed by a real XML parser (well-formedness checked,
 * entities decoded, sibling order kept) into a small tree tests can walk.
 */
export type TwimlNode = { name: string; attrs: Record<string, string>; children: TwimlNode[]; text: string };

type Raw = Record<string, unknown> & { ':@'?: Record<string, string> };

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
});

function toNode(raw: Raw): TwimlNode | null {
  const name = Object.keys(raw).find((k) => k !== ':@')!;
  if (name === '#text' || name === '?xml') return null;
  const content = raw[name] as Raw[];
  return {
    name,
    attrs: raw[':@'] ?? {},
    children: content.map(toNode).filter((n): n is TwimlNode => n !== null),
    text: content.map((c) => (typeof c['#text'] === 'string' ? c['#text'] : '')).join(''),
  };
}

/** The document's <Response> element; throws when the text is not well-formed TwiML. */
export function parseTwiml(xml: string): TwimlNode {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`Not well-formed XML: ${valid.err.msg}\n${xml}`);
  const nodes = (parser.parse(xml) as Raw[]).map(toNode).filter((n): n is TwimlNode => n !== null);
  if (nodes.length !== 1 || nodes[0]!.name !== 'Response') throw new Error(`Not a TwiML <Response> document:\n${xml}`);
  return nodes[0]!;
}

/** Every element named `name` below `node`, in document order. */
export function findAll(node: TwimlNode, name: string): TwimlNode[] {
  return node.children.flatMap((child) => [...(child.name === name ? [child] : []), ...findAll(child, name)]);
}

/** The one element named `name` below `node` (throws when there is none or several). */
export function findOne(node: TwimlNode, name: string): TwimlNode {
  const found = findAll(node, name);
  if (found.length !== 1) throw new Error(`Expected one <${name}>, found ${found.length}`);
  return found[0]!;
}
