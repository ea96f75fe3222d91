import { z } from 'zod';

export const LocationResponse = z
  .object({
    location_id: z.number().int(),
    external_id: z.string().nullable(),
    name: z.string(),
    address: z.string().nullable(),
    phone_number: z.string().nullable(),
    timezone: z.string().nullable(),
  })
  .meta({ id: 'LocationResponse' });
