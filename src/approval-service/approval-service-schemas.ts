import { z } from 'zod';

// Shapes of the service's answers, lenient where real installs differ (see docs/approval-service.md):
// extra fields are ignored, `mesg` and `msg` are both accepted, missing strings read as ''.

const text = z
  .union([z.string(), z.number(), z.null(), z.undefined()])
  .transform((v) => (v === null || v === undefined ? '' : String(v)));

const flag = z.union([z.number(), z.string()]).transform((v) => Number(v));

/** Every application error: HTTP 200 with `stat: false`. */
export const failureBody = z.object({
  stat: z.literal(false),
  code: z.number().optional(),
  info: z.string().optional(),
  msg: z.string().optional(),
  mesg: z.string().optional(),
});

export const startApprovalBody = z.object({
  stat: z.literal(true),
  data: z.object({ djbh: z.string().min(1) }),
});

export const statusBody = z.object({
  stat: z.literal(true),
  data: z.object({
    isend: flag,
    data: z.array(z.object({ actionname: z.string(), user_id: z.string().optional() })).nullable(),
  }),
});

export const departmentBody = z.object({
  stat: z.literal(true),
  data: z.object({
    sybDeptName: text,
    oneDeptName: text,
    twoDeptName: text,
    sybLeaderId: text,
    oneLeaderId: text,
    twoLeaderId: text,
    accountName: text,
    accountId: text,
    mobile: text,
  }),
});

/** The profile comes bare, without the envelope; its failures carry `stat`. */
export const profileBody = z.object({
  email: z.string().min(1),
  name: text,
  company: text,
  admin: text,
});
