import { sql } from 'drizzle-orm';
import type { Tx } from '@/server/db/client';
import { equalsAny } from '@/db/sql-array';
import { AppError } from '@/server/errors';
import { movedWaiting } from '@/server/services/conversations/waiting';

/** At most this many ids in a 409's new_message_ids (the oldest ones): enough to show, bounded. */
const MAX_NEW_MESSAGE_IDS = 100;

/**
 * The collision guard (docs/api.md#collision-guard): before a send is written, in its transaction,
 * refuses it (409 listing new_message_ids) when the recipients' conversations received a client
 * message or another sender's reply after `lastSeen`, the newest message the sender had seen.
 * Message ids rise in the order messages are stored, so one id marks "seen up to here" in any
 * conversation. The conversations are locked first, as touchConversations locks them (NO KEY
 * UPDATE, id order) and until the send commits: a concurrent guarded send to the same conversation
 * waits here, then reads the first one's reply and is refused, so of two sends that saw the same
 * message exactly one goes. A staff sender's own messages never hold it (two quick replies of
 * one person are not a collision); a sender without staff_id has none of its own. What counts is the product's one definition of a reply
 * (server/services/conversations/waiting.ts): notes, automatic answers and texts written for later
 * do not.
 */
export async function assertNoCollision(
  businessId: number,
  clientIds: number[],
  lastSeen: number,
  senderStaffId: number | null,
  tx: Tx,
): Promise<void> {
  if (clientIds.length === 0) return;
  const locked = await tx.execute<{ id: number }>(sql`
    select id from conversations
    where business_id = ${businessId} and ${equalsAny(sql`client_id`, [...new Set(clientIds)], 'int')}
    order by id for no key update`);
  if (locked.length === 0) return;
  const found = await tx.execute<{ id: string; direction: string }>(sql`
    select m.id, m.direction from messages m
    where m.business_id = ${businessId}
      and ${equalsAny(
        sql`m.conversation_id`,
        locked.map((c) => c.id),
        'int',
      )}
      and m.id > ${lastSeen}::bigint
      and ${movedWaiting()}
      ${senderStaffId === null ? sql`` : sql`and m.staff_id is distinct from ${senderStaffId}::int`}
    order by m.id
    limit ${MAX_NEW_MESSAGE_IDS}`);
  if (found.length === 0) return;
  const fromClient = found.filter((m) => m.direction === 'inbound').length;
  const replies = found.length - fromClient;
  const parts = [
    fromClient ? `${fromClient} from the client` : null,
    replies ? `${replies} ${replies === 1 ? 'reply' : 'replies'} by someone else` : null,
  ].filter(Boolean);
  throw new AppError(
    'conflict',
    `Not sent: ${found.length} new message${found.length === 1 ? '' : 's'} arrived after the one you last saw (${parts.join(', ')}). Read them, then send again.`,
    { fields: { new_message_ids: found.map((m) => Number(m.id)) } },
  );
}
