'use client';
import { useMemo } from 'react';
import { trpc } from '@/components/trpc/client';

/** How long the business's staff list (inbox.staff) is reused before it is read again. */
export const STAFF_STALE_MS = 300_000;

/** The business's staff names by id, from the one staff list every part of the inbox shares. */
export function useStaffNames(): (staffId: number) => string | undefined {
  const staff = trpc.inbox.staff.useQuery(undefined, { staleTime: STAFF_STALE_MS });
  const byId = useMemo(() => new Map((staff.data?.staffs ?? []).map((s) => [s.staff_id, s.staff_name])), [staff.data]);
  return (staffId) => byId.get(staffId);
}
