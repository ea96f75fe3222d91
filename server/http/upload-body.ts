import busboy from 'busboy';
import { AppError } from '@/server/errors';
import { MMS_MAX_BYTES } from '@/server/shared/limits';

/** One uploaded file as the request carried it; the service decides what it is (server/services/messages/uploads.ts). */
export type UploadedFile = { bytes: Buffer; declaredType: string; filename: string | null };

/** The multipart field that carries the file (docs/api.md#mms-uploads). */
export const UPLOAD_FIELD = 'file';

/**
 * An upload's body, in either of the two forms API clients send files in: `multipart/form-data`
 * with the file in the part named `file` (a form, `curl -F file=@photo.jpg`), or the bytes
 * themselves with their type as the request's Content-Type (`curl --data-binary @photo.jpg -H
 * 'Content-Type: image/jpeg'`, or `fetch(url, { body: file })` in a browser).
 */
export function uploadedFile(req: Request, rawBytes: Buffer): Promise<UploadedFile> {
  const contentType = req.headers.get('content-type') ?? '';
  if (bareType(contentType) === 'multipart/form-data') return multipartFile(contentType, rawBytes);
  return Promise.resolve({ bytes: rawBytes, declaredType: bareType(contentType), filename: null });
}

export const bareType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

function multipartFile(contentType: string, rawBytes: Buffer): Promise<UploadedFile> {
  return new Promise((resolve, reject) => {
    let found: UploadedFile | null = null;
    let tooLarge = false;
    let parser: busboy.Busboy;
    try {
      // One byte past the limit is enough to know the file is over it.
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fileSize: MMS_MAX_BYTES + 1, parts: 20 } });
    } catch {
      // No boundary, or a boundary busboy cannot read.
      return reject(new AppError('bad_request', 'Malformed multipart body'));
    }
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('limit', () => (tooLarge = true));
      // A body cut off inside the part errors on its stream too (see the parser's error below).
      stream.on('error', () => {});
      stream.on('data', (chunk: Buffer) => {
        if (name === UPLOAD_FIELD && !found) chunks.push(chunk);
      });
      stream.on('end', () => {
        if (name !== UPLOAD_FIELD || found) return;
        found = { bytes: Buffer.concat(chunks), declaredType: bareType(info.mimeType), filename: cleanFilename(info.filename) };
      });
    });
    parser.on('error', () => reject(new AppError('bad_request', 'Malformed multipart body')));
    parser.on('close', () => {
      if (tooLarge)
        return reject(new AppError('payload_too_large', `The file is over ${MMS_MAX_BYTES.toLocaleString('en-US')} bytes`));
      if (!found)
        return reject(
          AppError.invalid(['body', UPLOAD_FIELD], 'Field required: the file goes in the part named "file"', 'missing'),
        );
      resolve(found);
    });
    parser.end(rawBytes);
  });
}

/**
 * The uploader's file name as we keep it: no directories (busboy keeps only the last part), no
 * control characters, nothing PostgreSQL text cannot hold, at most 255 characters; null when
 * nothing is left.
 */
function cleanFilename(name: string | undefined): string | null {
  if (!name) return null;
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255)
    .toWellFormed()
    .trim();
  return cleaned || null;
}
