import { decidePossibleOptOut as op } from '@/server/http/operations/opt-outs';
import { route } from '@/server/http/route';
import { writingStaff } from '@/server/web/staff-context';
import { decidePossibleOptOut } from '@/server/services/compliance/opt-out-review';

// POST: confirm (opt the number out of SMS) or dismiss the pending possible opt-out.
export const POST = route(op, ({ caller, params, body, tx }) =>
  decidePossibleOptOut(
    params.business_id,
    params.conversation_id,
    body.decision,
    {
      messageId: body.message_id,
      staffId: writingStaff(caller, body.staff_id),
    },
    tx,
  ),
);
