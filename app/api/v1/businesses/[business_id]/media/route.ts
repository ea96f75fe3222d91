import { uploadMedia as op } from '@/server/http/operations/media';
import { route } from '@/server/http/route';
import { uploadedFile } from '@/server/http/upload-body';
import { storeUpload } from '@/server/services/messages/uploads';

// POST: one picture to send by MMS, as multipart/form-data or the bytes themselves (docs/api.md#mms-uploads).
export const POST = route(op, async ({ req, params, rawBytes, caller, tx }) =>
  storeUpload(params.business_id, await uploadedFile(req, rawBytes), caller, undefined, tx),
);
