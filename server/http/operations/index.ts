import type { Operation } from '../operation';
import * as appointments from './appointments';
import * as assignment from './assignment';
import * as auth from './auth';
import * as businesses from './businesses';
import * as consents from './consents';
import * as conversations from './conversations';
import * as health from './health';
import * as media from './media';
import * as messages from './messages';
import * as notificationEmail from './notification-email';
import * as notifications from './notifications';
import * as onboarding from './onboarding';
import * as openingHours from './opening-hours';
import * as optOuts from './opt-outs';
import * as savedReplies from './saved-replies';
import * as search from './search';
import * as staffAvailability from './staff-availability';
import * as voice from './voice';
import * as webhooks from './webhooks';
import * as outgoingWebhooks from './outgoing-webhooks';
import * as reports from './reports';

/** Every REST operation, in the order the API reference lists them. */
export const operations: Operation[] = [
  ...Object.values(health),
  ...Object.values(auth),
  ...Object.values(businesses),
  ...Object.values(openingHours),
  ...Object.values(staffAvailability),
  ...Object.values(assignment),
  ...Object.values(notifications),
  ...Object.values(notificationEmail),
  ...Object.values(reports),
  ...Object.values(conversations),
  ...Object.values(consents),
  ...Object.values(optOuts),
  ...Object.values(messages),
  ...Object.values(media),
  ...Object.values(savedReplies),
  ...Object.values(appointments),
  ...Object.values(search),
  ...Object.values(voice),
  ...Object.values(webhooks),
  ...Object.values(outgoingWebhooks),
  ...Object.values(onboarding),
] as Operation[];
