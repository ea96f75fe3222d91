import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import './globals.css';

// No title here: the inbox renders its own, with the unread count (components/inbox/inbox-app.tsx),
// and a second <title> from the metadata would be written over it. Other pages name themselves.
export const metadata: Metadata = {
  description: 'Client conversations by SMS, email and voice',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
