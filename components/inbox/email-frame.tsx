'use client';
import { useState, type ReactNode } from 'react';
import { trpc } from '@/components/trpc/client';
import styles from './inbox.module.css';

/**
 * An email's HTML in a sandboxed frame: sanitized on the server, no scripts (`sandbox` without
 * allow-scripts, and a CSP inside), no remote images until the staff member asks. Same-origin is
 * allowed only so the inbox can size the frame to its content; with scripts off nothing inside
 * can use it. Links open in a new tab that cannot reach back.
 */
export function EmailFrame({ messageId, fallback }: { messageId: number; fallback: ReactNode }) {
  const [allowRemoteImages, setAllowRemoteImages] = useState(false);
  const [height, setHeight] = useState(80);
  const view = trpc.inbox.emailView.useQuery({ messageId, allowRemoteImages }, { staleTime: Infinity });
  if (view.isPending) return <div className={styles.emailText}>{fallback}</div>;
  if (view.error || !view.data.document) return <div className={styles.emailText}>{fallback}</div>;
  return (
    <>
      {view.data.blockedImages > 0 && !allowRemoteImages ? (
        <p className={styles.meta}>
          {view.data.blockedImages} remote image{view.data.blockedImages === 1 ? '' : 's'} hidden.{' '}
          <button type="button" className={styles.button} onClick={() => setAllowRemoteImages(true)}>
            Show images
          </button>
        </p>
      ) : null}
      <iframe
        title="Email content"
        className={styles.frame}
        sandbox="allow-same-origin allow-popups allow-popups-to-escape-sandbox"
        referrerPolicy="no-referrer"
        srcDoc={view.data.document}
        style={{ height }}
        onLoad={(e) => {
          const doc = e.currentTarget.contentDocument;
          if (doc?.body) setHeight(Math.min(Math.max(doc.documentElement.scrollHeight, 40), 1200));
        }}
      />
    </>
  );
}
