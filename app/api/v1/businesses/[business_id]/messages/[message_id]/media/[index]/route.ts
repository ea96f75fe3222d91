import { env } from '@/server/env';
import { getMessageMedia as op } from '@/server/http/operations/conversations';
import { json, route } from '@/server/http/route';
import {
  fetchTwilioMedia,
  isTwilioMediaUrl,
  mediaAttachment,
  mediaResponse,
  MediaUnavailable,
} from '@/server/services/messages/media';
import { uploadedMedia } from '@/server/services/messages/uploads';

// GET: one MMS picture or file, for a caller of this business (docs/api.md#mms): our own upload
// from the database, or inbound media fetched from Twilio.
export const GET = route(op, async ({ params, log }) => {
  const attachment = await mediaAttachment(params.business_id, params.message_id, params.index);
  const name = `media-${params.index}`;
  if (attachment.media_id !== undefined) {
    const upload = await uploadedMedia(params.business_id, attachment.media_id);
    return mediaResponse({ bytes: upload.bytes, contentType: upload.contentType, disposition: 'inline' }, name);
  }
  const source = env().twilio;
  // Anything but our own Twilio media (an email attachment's link, a stored URL elsewhere) is not
  // fetched here: the route must not become a way to make the server fetch arbitrary URLs.
  if (!attachment.url || !isTwilioMediaUrl(attachment.url, source)) {
    return json(404, { detail: 'Media not available' });
  }
  try {
    return mediaResponse(await fetchTwilioMedia(attachment.url, source), name);
  } catch (err) {
    if (!(err instanceof MediaUnavailable)) throw err;
    // The reason only, never the URL (it names the account) or credentials.
    log.warn({ message_id: params.message_id, index: params.index, reason: err.message }, 'media not served');
    return json(err.status, { detail: err.status === 415 ? err.message : 'Media could not be fetched' });
  }
});
