import { env } from '@/server/env';
import { getMessageMedia as op } from '@/server/http/operations/conversations';
import { json, route } from '@/server/http/route';
import { fetchTwilioMedia, mediaResponse, MediaUnavailable, messageMedia } from '@/server/services/messages/media';
import { uploadedMedia } from '@/server/services/messages/uploads';

// GET: one MMS picture or file, for a caller of this business (docs/api.md#mms): our own upload
// from the database, or an inbound message's own media fetched from Twilio.
export const GET = route(op, async ({ params, log, tx }) => {
  const source = env().twilio;
  const media = await messageMedia(params.business_id, params.message_id, params.index, source, tx);
  const name = `media-${params.index}`;
  // Anything but the message's own media (an email attachment's link, a URL planted on another
  // message) is not fetched here: the route must not fetch with our credentials what the message
  // does not own, nor become a way to make the server fetch arbitrary URLs.
  if (!media) return json(404, { detail: 'Media not available' });
  if (media.kind === 'upload') {
    const upload = await uploadedMedia(params.business_id, media.mediaId, tx);
    return mediaResponse({ bytes: upload.bytes, contentType: upload.contentType, disposition: 'inline' }, name);
  }
  try {
    return mediaResponse(await fetchTwilioMedia(media.url, source), name);
  } catch (err) {
    if (!(err instanceof MediaUnavailable)) throw err;
    // The reason only, never the URL (it names the account) or credentials.
    log.warn({ message_id: params.message_id, index: params.index, reason: err.message }, 'media not served');
    return json(err.status, { detail: err.status === 415 ? err.message : 'Media could not be fetched' });
  }
});
