import { SignedInHeader } from './_components/signed-in-header';

export default function InboxPage() {
  return (
    <main>
      <SignedInHeader />
    </main>
  );
}
