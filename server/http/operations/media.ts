import { z } from 'zod';
import { businessPath, idParam } from '@/server/schemas/common';
import { MediaUpload } from '@/server/schemas/messages';
import { MMS_MAX_BYTES, MMS_UPLOAD_TYPES } from '@/server/shared/limits';
import { MEDIA_URL_TTL_SECONDS } from '@/server/shared/limits';
import { defineOperation } from '../operation';
import { UPLOAD_FIELD } from '../upload-body';

const BYTES = MMS_MAX_BYTES.toLocaleString('en-US');

export const uploadMedia = defineOperation({
  operationId: 'uploadMedia',
  method: 'post',
  path: '/businesses/{business_id}/media',
  tag: 'businesses',
  summary: 'Upload a picture to send by MMS',
  description:
    `One JPEG, PNG or GIF picture of at most ${BYTES} bytes, stored for this business; send it with \`media_ids\` on SMS queue items. ` +
    `Either \`multipart/form-data\` with the file in the part \`${UPLOAD_FIELD}\`, or the bytes themselves with the picture's type as Content-Type. ` +
    'The bytes decide the type: a file that is not one of the three, or not what its declared type says, is a 415. ' +
    'Bytes this business already stores are stored once (a repeated upload still gets its own `media_id`); new bytes past the ' +
    "business's storage quota (`MEDIA_STORAGE_QUOTA_BYTES`, 1 GiB by default) are a 507. An upload no message names is deleted a day after it was made.",
  auth: 'any',
  params: businessPath,
  fileBody: { field: UPLOAD_FIELD, types: MMS_UPLOAD_TYPES, maxBytes: MMS_MAX_BYTES },
  // The file and a multipart envelope around it; the file itself is held to MMS_MAX_BYTES.
  maxBodyBytes: MMS_MAX_BYTES + 64 * 1024,
  response: MediaUpload,
  errors: [403, 404, 415, 507],
});

export const getSignedMedia = defineOperation({
  operationId: 'getSignedMedia',
  method: 'get',
  path: '/public-media/{business_id}/{media_id}',
  tag: 'businesses',
  summary: 'An uploaded picture, for whoever holds its signed URL (Twilio)',
  description:
    'The URL is made by the send worker for each send of a message with `media_ids` and handed to Twilio as `MediaUrl`; ' +
    `it needs no credentials and works for ${MEDIA_URL_TTL_SECONDS / 3600} hours. ` +
    'A signature that does not match the business, the upload and the expiry is a 403; an expired URL a 410.',
  auth: 'none',
  params: z.object({ business_id: idParam, media_id: idParam }),
  query: z.object({
    expires: z
      .string()
      .max(10)
      .regex(/^[0-9]{1,10}$/, 'must be a Unix time in seconds')
      .transform(Number),
    signature: z
      .string()
      .max(43)
      .regex(/^[A-Za-z0-9_-]{43}$/, 'must be 43 base64url characters'),
  }),
  binaryResponse: MMS_UPLOAD_TYPES,
  errors: [403, 404, 410],
});
