'use client';
import { useState } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './inbox.module.css';
import type { MessageItem } from './types';

type Attachment = NonNullable<MessageItem['attachments']>[number];

/** What the media route shows inline (server/services/messages/media.ts); anything else is a download. */
const PICTURE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * An SMS's pictures and files (docs/api.md#mms). Inbound media comes through our media route,
 * and only when asked: a picture is a "Show picture" button until clicked, like remote images in
 * email, so opening a conversation fetches nothing from Twilio. Pictures uploaded to us
 * (docs/api.md#mms-uploads) are ours, served by the same route from our database: shown at once.
 * Other outbound media is the caller's own https URL, offered as a link.
 */
export function MmsMedia({ m }: { m: MessageItem }) {
  const me = trpc.session.me.useQuery(undefined, { staleTime: Infinity });
  const items = (m.attachments ?? []).map((a, index) => ({ a, index })).filter(({ a }) => a.url || a.media_id);
  if (items.length === 0 || m.message_id <= 0) return null;
  const base = me.data ? `/api/v1/businesses/${me.data.businessId}/messages/${m.message_id}/media` : null;
  const label = (index: number) => (items.length > 1 ? `Picture ${index + 1}` : 'Picture');
  return (
    <div className={styles.attachments} aria-label="Media">
      {items.map(({ a, index }) =>
        a.media_id ? (
          base === null ? null : (
            // eslint-disable-next-line @next/next/no-img-element -- our own authenticated route, not an optimizable static asset
            <img key={index} className={styles.mmsPicture} src={`${base}/${index}`} alt={`${label(index)} sent with this text`} />
          )
        ) : m.direction !== 'inbound' ? (
          /^https:/i.test(a.url!) ? (
            <a key={index} className={styles.chip} href={a.url!} target="_blank" rel="noopener noreferrer nofollow">
              📎 {a.filename}
            </a>
          ) : null
        ) : base === null ? null : PICTURE_TYPES.has((a.content_type ?? '').toLowerCase()) ? (
          <Picture key={index} src={`${base}/${index}`} label={label(index)} />
        ) : (
          <a key={index} className={styles.chip} href={`${base}/${index}`} download>
            📎 Download {fileLabel(a)}
          </a>
        ),
      )}
    </div>
  );
}

function Picture({ src, label }: { src: string; label: string }) {
  const [shown, setShown] = useState(false);
  const [failed, setFailed] = useState(false);
  if (!shown) {
    return (
      <button type="button" className={styles.button} onClick={() => setShown(true)} aria-label={`Show ${label.toLowerCase()}`}>
        🖼 Show {label.toLowerCase()}
      </button>
    );
  }
  if (failed) return <span className={styles.meta}>{label} could not be loaded</span>;
  // eslint-disable-next-line @next/next/no-img-element -- our own authenticated route, not an optimizable static asset
  return <img className={styles.mmsPicture} src={src} alt={`${label} sent by the client`} onError={() => setFailed(true)} />;
}

const fileLabel = (a: Attachment) => (a.content_type ? `${a.filename} (${a.content_type})` : a.filename);
