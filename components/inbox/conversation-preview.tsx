import inbox from './inbox.module.css';
import { previewWords } from './plain-words';
import styles from './texts.module.css';
import type { ConversationRow } from './types';

/**
 * A list row's preview (docs/api.md#previews): the client's unread message, else the latest one; a
 * note as a note ("Note: …", in the note's colors, under no channel), a text still waiting as
 * "Scheduled · …", one that did not go as "Failed · …".
 */
export function ConversationPreview({ row }: { row: ConversationRow }) {
  const p = previewWords(row);
  return (
    <>
      {p.chip ? <span className={inbox.chip}>{p.chip}</span> : null}
      <span
        className={`${styles.preview} ${p.note ? styles.previewNote : ''}`}
        data-testid="conversation-preview"
        data-kind={p.note ? 'note' : (row.preview?.status ?? undefined)}
      >
        {p.state ? (
          <>
            <span className={styles.previewState}>{p.state}</span>{' '}
          </>
        ) : null}
        {p.text}
      </span>
    </>
  );
}
