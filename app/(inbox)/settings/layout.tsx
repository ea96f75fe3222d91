import type { Metadata } from 'next';
import type { ReactNode } from 'react';

export const metadata: Metadata = { title: 'Settings · Inbox' };

/** The settings pages' tab title; each page renders its own settings. */
export default function SettingsLayout({ children }: { children: ReactNode }) {
  return children;
}
