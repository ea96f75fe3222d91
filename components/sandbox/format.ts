import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '@/server/trpc/root';
import { FAILED_STATUSES, STATUS_LABEL } from '@/components/inbox/format';

type Out = inferRouterOutputs<AppRouter>['sandbox'];
export type SandboxClient = Out['clients']['clients'][number];
export type PhoneMessage = Out['thread']['messages'][number];
export type MailItem = Out['mailbox']['emails'][number];

// One vocabulary of delivery statuses for the inbox and the sandbox.
export const statusLabel = (status: string) => STATUS_LABEL[status] ?? status;
export const isBadStatus = (status: string) => FAILED_STATUSES.has(status);
export const isGoodStatus = (status: string) => ['delivered', 'read'].includes(status);

/** "14:03" today, "Mar 4, 14:03" otherwise. */
export function shortTime(value: Date | string | null | undefined): string {
  if (!value) return '';
  const d = new Date(value);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date().toDateString()
    ? time
    : `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })}, ${time}`;
}

export function fileSize(bytes: number | null): string {
  if (bytes === null) return '';
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export const clientLabel = (c: { name: string | null; phone: string | null; email: string | null }) =>
  c.name || c.phone || c.email || 'Unnamed client';

/** A tRPC error's message, with the two cases a person can act on spelled out. */
export function errorText(error: { message: string; data?: { code?: string } | null } | null | undefined): string {
  if (!error) return '';
  if (error.data?.code === 'UNAUTHORIZED') return 'Your session has ended. Sign in again from your business platform.';
  return error.message;
}

/** A link target only for http(s) URLs (an attachment's stored URL is not trusted to be one). */
export const httpUrl = (url: string | null | undefined): string | null =>
  url && /^https?:\/\//i.test(url.trim()) ? url.trim() : null;
