'use client';
import { useEffect, useRef, useState } from 'react';
import { trpc } from '@/components/trpc/client';
import { MMS_MAX_BYTES, MMS_MAX_MEDIA, MMS_UPLOAD_TYPES } from '@/server/shared/limits';
import styles from './inbox.module.css';

/**
 * Pictures attached to a text (docs/api.md#mms-uploads). Each is uploaded as soon as it is
 * attached, over the same REST operation API clients use (`POST /businesses/{id}/media`, with the
 * session cookie), so a refused file shows its reason before Send; the text then names the uploads
 * by `media_ids`. Previews are the local file (an object URL), never a round trip.
 */

type Picture = {
  key: number;
  name: string;
  preview: string;
  state: { kind: 'uploading' } | { kind: 'ready'; mediaId: number } | { kind: 'failed'; reason: string };
};

const TYPES: readonly string[] = MMS_UPLOAD_TYPES;
const LIMIT_MB = MMS_MAX_BYTES / 1_000_000;

async function upload(businessId: number, file: File): Promise<number> {
  // A form, so the file's name goes with it (shown as the attachment's name).
  const form = new FormData();
  form.append('file', file);
  const res = await fetch(`/api/v1/businesses/${businessId}/media`, { method: 'POST', body: form });
  const body = (await res.json().catch(() => null)) as { media_id?: number; detail?: unknown } | null;
  if (res.ok && typeof body?.media_id === 'number') return body.media_id;
  throw new Error(typeof body?.detail === 'string' ? body.detail : `The upload failed (${res.status})`);
}

export function usePictureAttachments() {
  const me = trpc.session.me.useQuery(undefined, { staleTime: Infinity });
  const [pictures, setPictures] = useState<Picture[]>([]);
  const [refusal, setRefusal] = useState<string | null>(null);
  const nextKey = useRef(0);
  // Object URLs live until their picture is removed or sent, or the composer goes away.
  const previews = useRef(new Set<string>());
  useEffect(() => {
    const held = previews.current;
    return () => held.forEach((url) => URL.revokeObjectURL(url));
  }, []);

  const update = (key: number, state: Picture['state']) =>
    setPictures((list) => list.map((p) => (p.key === key ? { ...p, state } : p)));

  function add(files: File[]) {
    setRefusal(null);
    const businessId = me.data?.businessId;
    if (businessId === undefined) return setRefusal('Still loading: attach the pictures again in a moment.');
    const room = MMS_MAX_MEDIA - pictures.length;
    const refused: string[] = [];
    const accepted = files.filter((f) => {
      if (!TYPES.includes(f.type)) refused.push(`${f.name} is not a JPEG, PNG or GIF picture`);
      else if (f.size > MMS_MAX_BYTES) refused.push(`${f.name} is over ${LIMIT_MB} MB`);
      else return true;
      return false;
    });
    if (accepted.length > room) refused.push(`A text carries at most ${MMS_MAX_MEDIA} pictures`);
    if (refused.length) setRefusal(refused.join('. ') + '.');
    for (const file of accepted.slice(0, Math.max(room, 0))) {
      const key = nextKey.current++;
      const preview = URL.createObjectURL(file);
      previews.current.add(preview);
      setPictures((list) => [...list, { key, name: file.name, preview, state: { kind: 'uploading' } }]);
      upload(businessId, file).then(
        (mediaId) => update(key, { kind: 'ready', mediaId }),
        (err: Error) => update(key, { kind: 'failed', reason: err.message }),
      );
    }
  }

  function release(list: Picture[]) {
    for (const p of list) {
      URL.revokeObjectURL(p.preview);
      previews.current.delete(p.preview);
    }
  }

  return {
    pictures,
    refusal,
    add,
    remove(key: number) {
      release(pictures.filter((p) => p.key === key));
      setPictures((list) => list.filter((p) => p.key !== key));
    },
    clear() {
      release(pictures);
      setPictures([]);
      setRefusal(null);
    },
    /** Sending waits while a picture is still uploading or one failed (remove it first). */
    settled: pictures.every((p) => p.state.kind === 'ready'),
    mediaIds: pictures.flatMap((p) => (p.state.kind === 'ready' ? [p.state.mediaId] : [])),
  };
}

export type PictureAttachmentsState = ReturnType<typeof usePictureAttachments>;

/** Image files among pasted or dropped ones (anything else is left to the browser). */
export const imageFiles = (list: FileList | null | undefined) => [...(list ?? [])].filter((f) => f.type.startsWith('image/'));

/** The Attach pictures button and the previews, each with Remove. */
export function PictureAttachments({ state }: { state: PictureAttachmentsState }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button
        type="button"
        className={`${styles.button} ${styles.ghost}`}
        onClick={() => input.current?.click()}
        disabled={state.pictures.length >= MMS_MAX_MEDIA}
      >
        Attach pictures
      </button>
      <input
        ref={input}
        type="file"
        accept={MMS_UPLOAD_TYPES.join(',')}
        multiple
        hidden
        aria-label="Attach pictures"
        onChange={(e) => {
          state.add([...(e.target.files ?? [])]);
          e.target.value = '';
        }}
      />
    </>
  );
}

export function PicturePreviews({ state }: { state: PictureAttachmentsState }) {
  if (state.pictures.length === 0 && !state.refusal) return null;
  return (
    <div className={styles.attachments} aria-label="Attached pictures" role="list">
      {state.pictures.map((p) => (
        <figure key={p.key} className={styles.picturePreview} role="listitem" aria-label={p.name}>
          {/* eslint-disable-next-line @next/next/no-img-element -- a local object URL, not an optimizable asset */}
          <img src={p.preview} alt={`Preview of ${p.name}`} />
          <figcaption>
            {p.state.kind === 'uploading' ? (
              'Uploading…'
            ) : p.state.kind === 'failed' ? (
              <span role="alert">{p.state.reason}</span>
            ) : null}
            <button
              type="button"
              className={`${styles.button} ${styles.ghost}`}
              onClick={() => state.remove(p.key)}
              aria-label={`Remove ${p.name}`}
            >
              ✕
            </button>
          </figcaption>
        </figure>
      ))}
      {state.refusal ? (
        <p role="alert" className={styles.error} style={{ margin: 0, fontSize: 13 }}>
          {state.refusal}
        </p>
      ) : null}
    </div>
  );
}
