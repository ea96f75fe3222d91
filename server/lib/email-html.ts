import sanitizeHtml from 'sanitize-html';

/**
 * A client's email HTML, made inert for the inbox. Everything a client sends is hostile: the
 * maintained sanitizer keeps formatting and drops scripts, event handlers, forms, frames, embeds,
 * `<style>` blocks and every URL scheme but http(s)/mailto/tel (cid/data only for images). Remote
 * images are withheld (moved to `data-blocked-src`, so opening the mail tells no tracker) until the
 * staff member asks. The result is shown in a sandboxed frame without scripts, whose CSP
 * (`emailFrameDocument`) blocks every remote load a leftover inline style could still attempt.
 */
type SanitizedEmail = { html: string; blockedImages: number };

const ALLOWED_TAGS = [
  ...sanitizeHtml.defaults.allowedTags.filter((t) => t !== 'style'),
  'img',
  'font',
  'center',
  'span',
  'u',
  's',
];

export function sanitizeEmailHtml(html: string, opts: { allowRemoteImages: boolean }): SanitizedEmail {
  let blockedImages = 0;
  const clean = sanitizeHtml(html, {
    allowedTags: ALLOWED_TAGS,
    disallowedTagsMode: 'discard',
    allowedAttributes: {
      '*': [
        'style',
        'align',
        'valign',
        'width',
        'height',
        'bgcolor',
        'color',
        'dir',
        'title',
        'colspan',
        'rowspan',
        'border',
        'cellpadding',
        'cellspacing',
      ],
      a: ['href', 'name', 'target', 'rel'],
      img: ['src', 'alt', 'data-blocked-src'],
      font: ['face', 'size', 'color'],
    },
    allowedSchemes: ['http', 'https', 'mailto', 'tel'],
    allowedSchemesByTag: { img: ['http', 'https', 'cid', 'data'] },
    allowProtocolRelative: false,
    transformTags: {
      // Links leave the frame in a new tab that cannot reach back (no opener, no referrer).
      a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, target: '_blank', rel: 'noopener noreferrer nofollow' } }),
      img: (tagName, attribs) => {
        const src = attribs.src ?? '';
        if (opts.allowRemoteImages || !/^https?:/i.test(src)) return { tagName, attribs };
        blockedImages += 1;
        const { src: _remote, ...rest } = attribs;
        return { tagName, attribs: { ...rest, 'data-blocked-src': src } };
      },
    },
  });
  return { html: clean, blockedImages };
}

/**
 * The frame's whole document: the sanitized body under a CSP that forbids scripts and any remote
 * load (images only from data:, or from https when the staff member allowed remote images).
 */
export function emailFrameDocument(email: SanitizedEmail, opts: { allowRemoteImages: boolean }): string {
  const img = opts.allowRemoteImages ? 'img-src data: https: http:' : 'img-src data:';
  const csp = `default-src 'none'; ${img}; style-src 'unsafe-inline'; font-src 'none'; form-action 'none'; base-uri 'none'`;
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<base target="_blank"><style>body{margin:0;padding:8px;font:14px system-ui,sans-serif;color:#1f2937;word-wrap:break-word}img{max-width:100%;height:auto}</style>
</head><body>${email.html}</body></html>`;
}
