import { getSignedMedia as op } from '@/server/http/operations/media';
import { json, route } from '@/server/http/route';
import { mediaResponse } from '@/server/services/messages/media';
import { checkMediaLink } from '@/server/services/messages/media-links';
import { uploadedMedia } from '@/server/services/messages/uploads';

// GET: an uploaded picture for the holder of its signed URL, Twilio sending an MMS (docs/api.md#mms-uploads).
// No credentials: the signature over business, upload and expiry is the credential.
export const GET = route(op, async ({ params, query, tx }) => {
  const check = checkMediaLink({
    businessId: params.business_id,
    mediaId: params.media_id,
    expires: query.expires,
    signature: query.signature,
  });
  if (!check.ok) {
    return check.reason === 'expired'
      ? json(410, { detail: 'This media link has expired' })
      : json(403, { detail: 'Invalid media link' });
  }
  const upload = await uploadedMedia(params.business_id, params.media_id, tx);
  // Cached at most until the link expires.
  return mediaResponse(
    { bytes: upload.bytes, contentType: upload.contentType, disposition: 'inline' },
    `media-${params.media_id}`,
    check.secondsLeft,
  );
});
