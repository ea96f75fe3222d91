export { submitEmail, submitSms, type SubmitOptions, type SubmitResult } from './plan';
