'use client';
import { useCallback, useSyncExternalStore } from 'react';
import type { NotificationFrame } from '@/server/shared/notifications';
import { alertBody, notificationTag, notificationTarget, shouldAlert } from './notification-rules';

/**
 * Desktop notifications (the Notification API) and the optional sound, for the bell's frames
 * (use-live-inbox.ts). Permission is asked only from the bell panel's button, never on load; the
 * sound is off until the staff member turns it on, and the choice is kept in this browser.
 */

export type DesktopPermission = NotificationPermission | 'unsupported';

const SOUND_KEY = 'inbox.notificationSound';
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((l) => l());
function subscribe(listener: () => void) {
  listeners.add(listener);
  // Permission can also change in the browser's site settings: read again when the tab comes back.
  document.addEventListener('visibilitychange', listener);
  return () => {
    listeners.delete(listener);
    document.removeEventListener('visibilitychange', listener);
  };
}

const supported = () => typeof window !== 'undefined' && 'Notification' in window;
const permissionNow = (): DesktopPermission => (supported() ? window.Notification.permission : 'unsupported');
function soundNow(): boolean {
  try {
    return window.localStorage.getItem(SOUND_KEY) === 'on';
  } catch {
    return false; // storage refused (privacy settings): the default
  }
}

/** The Notification permission as it is now; 'unsupported' without the API (and on the server). */
export function useDesktopPermission(): [DesktopPermission, () => Promise<void>] {
  const permission = useSyncExternalStore(subscribe, permissionNow, () => 'unsupported' as const);
  const ask = useCallback(async () => {
    if (!supported()) return;
    try {
      await window.Notification.requestPermission();
    } finally {
      changed();
    }
  }, []);
  return [permission, ask];
}

/** Whether the sound plays, and its switch (kept in localStorage). */
export function useNotificationSound(): [boolean, (on: boolean) => void] {
  const on = useSyncExternalStore(subscribe, soundNow, () => false);
  const set = useCallback((next: boolean) => {
    try {
      window.localStorage.setItem(SOUND_KEY, next ? 'on' : 'off');
    } catch {
      // not kept: it still changes for this page below
    }
    if (next) beep(); // the click lets the audio start, and the staff member hears what they chose
    changed();
  }, []);
  return [on, set];
}

let audio: AudioContext | null = null;

/** A short two-tone beep from an oscillator (no sound file to download). */
function beep() {
  try {
    audio ??= new AudioContext();
    if (audio.state === 'suspended') void audio.resume();
    const t = audio.currentTime;
    const gain = audio.createGain();
    gain.connect(audio.destination);
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(0.15, t + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.3);
    const osc = audio.createOscillator();
    osc.type = 'sine';
    osc.frequency.setValueAtTime(880, t);
    osc.frequency.setValueAtTime(660, t + 0.12);
    osc.connect(gain);
    osc.start(t);
    osc.stop(t + 0.3);
  } catch {
    // no audio here: the notification still shows
  }
}

/**
 * The live stream's notification handler for the inbox: when `shouldAlert` says so, a desktop
 * notification (one per conversation: its tag, `renotify` so a replacement still alerts) whose click
 * brings this tab to the front and opens the conversation; and the sound when it is on.
 */
export function useDesktopAlerts(openConversationId: number | null, open: (conversationId: number) => void) {
  return useCallback(
    (n: NotificationFrame['notification']) => {
      const page = { hidden: document.visibilityState === 'hidden', openConversationId };
      if (!shouldAlert(n, page)) return;
      if (soundNow()) beep();
      if (permissionNow() !== 'granted') return;
      try {
        const shown = new window.Notification(n.title, {
          body: alertBody(n),
          tag: notificationTag(n),
          renotify: true,
        } as NotificationOptions & { renotify: boolean });
        shown.onclick = () => {
          window.focus();
          const target = notificationTarget(n);
          if (target && 'href' in target) window.location.assign(target.href);
          else if (target) open(target.conversationId);
          shown.close();
        };
      } catch {
        // Some browsers allow notifications only from a service worker: the bell still tells.
      }
    },
    [openConversationId, open],
  );
}
