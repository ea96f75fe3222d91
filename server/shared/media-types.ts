/**
 * How MMS media of a stored message is served by our media route (docs/api.md#mms): the types it
 * answers with, inline or as a download. The route and the API reference both read this.
 */

/** Shown inline (an <img>): raster formats browsers decode and that cannot carry script. SVG is not among them. */
const INLINE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Served as downloads only (Content-Disposition: attachment): what phones commonly send besides pictures. */
const DOWNLOAD_TYPES = new Set([
  'image/heic',
  'image/heif',
  'application/pdf',
  'text/vcard',
  'text/x-vcard',
  'audio/mpeg',
  'audio/mp4',
  'audio/ogg',
  'audio/amr',
  'audio/3gpp',
  'video/mp4',
  'video/3gpp',
  'video/quicktime',
]);

/** Every type the media route may answer with, for the API reference. */
export const SERVED_MEDIA_TYPES: readonly string[] = [...INLINE_TYPES, ...DOWNLOAD_TYPES];

/** How a content type is served: inline, as a download, or not at all. */
export function mediaDisposition(contentType: string | null | undefined): 'inline' | 'attachment' | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (INLINE_TYPES.has(type)) return 'inline';
  if (DOWNLOAD_TYPES.has(type)) return 'attachment';
  return null;
}
