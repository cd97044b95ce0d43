import type { TextChange } from '../approvals/acceptable-text.ts';
import type { AccountLinking } from '../approvals/account-links.ts';
import type { DraftProblem } from '../approvals/approval-request.ts';
import type { Decision } from '../approvals/approval-types.ts';
import { SERVICE_WORDS } from '../approvals/approval-types.ts';
import type { TemplateChange, TemplateProblem } from '../approvals/request-templates.ts';
import type { StepsProblem } from '../approvals/steps.ts';
import type { LaterStepsProblem } from '../approvals/workflow-steps.ts';

/**
 * Everything the app says to a person, in Chinese for a `zh-*` Slack locale and English otherwise.
 * These are Slack mrkdwn: a literal < or > must be written &lt; &gt;, or Slack reads a link.
 */
export type Language = 'en' | 'zh';

export function languageOf(locale: string | undefined): Language {
  return locale?.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

/** A day as people read it: "3 Dec" in English, "12月3日" in Chinese, in their own time zone. */
function shortDate(locale: string, date: Date, timeZone: string | undefined): string {
  const options: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short' };
  try {
    return new Intl.DateTimeFormat(locale, { ...options, timeZone }).format(date);
  } catch {
    // An unknown time zone name: the server's.
    return new Intl.DateTimeFormat(locale, options).format(date);
  }
}

/** A duration in its largest whole unit, at least one minute. */
function wholeUnits(ms: number): [number, 'minute' | 'hour' | 'day'] {
  const minutes = Math.max(1, Math.floor(ms / 60_000));
  if (minutes < 60) return [minutes, 'minute'];
  const hours = Math.floor(minutes / 60);
  return hours < 24 ? [hours, 'hour'] : [Math.floor(hours / 24), 'day'];
}

const en = {
  modalTitle: 'Request approval',
  shortcutOnOwnMessage:
    'This message is from the Approvals app itself (an approval request or one of its updates), so there is nothing here to request approval for. *Follow and discuss that approval in the message’s thread.* To start a new approval, type `/approve`, or use ⋯ *Request approval* on a message someone wrote.',
  submit: 'Submit',
  cancel: 'Cancel',
  close: 'Close',
  titleLabel: 'Title',
  titleHint: 'Up to 200 characters.',
  stepNoApprover: (why: string) => `No approver was given to the step. ${why}`,
  confirmAsk: (startedBy: string | null) =>
    startedBy
      ? `${startedBy} ran a workflow that wants to start an approval *in your name*.`
      : 'A workflow wants to start an approval *in your name*.',
  confirmApproverSuggested: 'your nearest leader in the org chart',
  confirmWhere: (channel: string | null) =>
    channel ? `in <#${channel}>` : 'in your direct messages with the app',
  confirmPostedLabel: 'Posted',
  confirmDeadline: (minutes: number) =>
    `Nothing is started unless you press Start. Without an answer within ${minutes} minutes, the workflow step ends and nothing is started.`,
  confirmStart: 'Start',
  confirmDecline: 'Decline',
  confirmFallback: (title: string) =>
    `A workflow wants to start an approval in your name: ${title}`,
  confirmStarted: ':white_check_mark: You confirmed; the approval was started.',
  confirmDeclined: 'You declined. Nothing was started.',
  confirmExpired: 'No answer in time. Nothing was started.',
  confirmFailed: (why: string) => `You confirmed, but the approval could not start: ${why}`,
  confirmOnlyRequester: (requester: string) =>
    `Only ${requester} can answer this: the approval would be started in their name.`,
  confirmGone: 'This question was already answered, or its time ran out.',
  confirmModalTitle: 'Start this approval?',
  confirmInPlace:
    'You ran a workflow that will start this approval *in your name*. Nothing is started unless you press Start.',
  stepCancelled: 'The requester cancelled this approval before it started. Nothing was started.',
  stepStartInterrupted:
    'The app stopped while starting this approval, and no approval of this run was recorded. It may exist in the approval service all the same: check there before running the workflow again.',
  stepDeclined: 'The requester declined to start this approval in their name. Nothing was started.',
  stepExpired: (minutes: number) =>
    `The requester did not confirm within ${minutes} minutes, so no approval was started in their name.`,
  stepNotAsked:
    'The requester could not be asked to confirm this workflow step (their direct messages with the app could not be reached). Nothing was started.',
  stepTooLongToShow:
    'The title and note of this step are too long to show the requester in full, and nothing is started that they have not seen whole. Shorten the note. Nothing was started.',
  confirmNotAsShown:
    'What would start is not exactly what you were shown, so nothing was started. Run the workflow again.',
  stepFailed: (reason: 'gave-up' | 'vanished', djbh: string, days: number) =>
    reason === 'gave-up'
      ? `Approval ${djbh} had no decision after ${days} days, so the app stopped following it. It is still open in the approval service.`
      : `The approval service no longer knows approval ${djbh}, so its outcome cannot be told. Ask the service's administrators.`,
  titleTooLong: (length: number, limit: number) =>
    `${length} characters: the approval service takes at most ${limit}. Shorten it before you submit.`,
  noteLabel: 'Note',
  noteHint: (limit: number) =>
    `What is to be approved, and why. Up to ${limit.toLocaleString('en-US')} characters.`,
  noteCut: (length: number, limit: number) =>
    `:warning: The earlier note has ${length.toLocaleString('en-US')} characters and this field holds ${limit.toLocaleString('en-US')}, so only its first ${limit.toLocaleString('en-US')} are filled in above. Shorten it to what matters before you submit; the whole earlier note stays with the earlier approval in the approval service.`,
  approverLabel: 'Approver',
  choosePerson: 'Choose a person…',
  channelLabel: 'Post in',
  channelHint: 'Leave it empty to get the request in your direct messages with the app.',
  chooseChannel: 'Choose a channel…',
  approverLoginLabel: 'Or the approver’s login in the approval service',
  approverLoginHint: (login: string) =>
    `${login} is not on Slack. Keep this login to ask them anyway, or clear it and pick someone above.`,
  approverLoginInvalid:
    'A login has only letters, digits and . - _ @ (for example name@corp.example).',
  lookingUp: ':hourglass_flowing_sand: Looking you up in the approval service…',
  chain: (chain: string) => `:office: ${chain}`,
  suggested: (name: string) =>
    `Suggested approver: ${name}, your nearest leader. You can choose someone else.`,
  noEmail:
    'Your Slack profile has no e-mail address the app can read, so it cannot find you in the approval service. Ask your Slack admin to show e-mail addresses to apps.',
  lookupFailed:
    'The approval service could not be reached to suggest an approver; pick one yourself.',
  unknownPerson: (login: string) =>
    `The approval service does not know ${login} yet, so no approver is suggested; pick one yourself.`,
  noLeader: 'No leader is on record for you in the approval service; pick an approver yourself.',
  leaderNotOnSlack: (login: string) =>
    `Your nearest leader, ${login}, is not on Slack; pick an approver yourself.`,
  awayUntil: (name: string, until: Date, timeZone: string | undefined, status: string) =>
    `:warning: ${name} is away until ${shortDate('en-GB', until, timeZone)}: ${status}`,
  deactivated: (name: string) => `:warning: ${name}’s Slack account is deactivated.`,
  suggestedInstead: (name: string) =>
    `Suggested instead: ${name}, the next leader up. You may still choose anyone.`,
  nextLeaderUp: (name: string) =>
    `The next leader up is ${name}. You may still send it to the person you chose.`,
  nobodyAvailableAbove: 'Nobody further up the chain is available; you may still send it to them.',
  templateLabel: 'Template',
  chooseTemplate: 'Start from a template…',
  templateHint: 'This channel’s templates: picking one fills in the title, note and approver.',
  templateApplied: (name: string) => `:memo: Filled in from the template *${name}*.`,
  templateNoteKept: 'Your note was kept as you wrote it; the template’s note was not put in.',
  templateGone: 'That template was removed meanwhile; pick another, or fill the form in yourself.',
  fromTemplate: (name: string) => `:memo: From template *${name}*`,
  templatesTitle: 'Request templates',
  templatesIntro: (channel: string, n: number, max: number) =>
    `Templates of <#${channel}>: ${n} of at most ${max}. The request form offers them in this channel. Anyone in the channel may add, edit or remove them; each change is recorded.`,
  templatesNone: 'No templates yet.',
  templateAdd: 'Add a template',
  templateEdit: 'Edit',
  templateRemove: 'Remove this template',
  templateRemoveConfirmTitle: 'Remove the template?',
  templateRemoveConfirm: (name: string) =>
    `Remove *${name}*? It is no longer offered; requests made from it keep naming it.`,
  templateRemoveYes: 'Remove',
  templateFull: (max: number) =>
    `This channel has ${max} templates, the most it may have: remove one to add another.`,
  templatePrefixShown: (prefix: string) => `Title starts with: ${prefix}`,
  templateApproverShown: (who: string) => `Approver: ${who}`,
  templateAddedBy: (who: string, at: Date, timeZone: string | undefined) =>
    `Added by ${who} on ${shortDate('en-GB', at, timeZone)}`,
  templateEditedBy: (who: string, at: Date, timeZone: string | undefined) =>
    `edited by ${who} on ${shortDate('en-GB', at, timeZone)}`,
  templatesHistory: '*Recent changes*',
  templateChange: (
    change: TemplateChange,
    name: string,
    who: string,
    timeZone: string | undefined,
  ) =>
    `${shortDate('en-GB', change.at, timeZone)}: ${who} ${{ added: 'added', edited: 'edited', removed: 'removed' }[change.action]} *${name}*`,
  templateEditorNew: 'New template',
  templateEditorEdit: 'Edit template',
  save: 'Save',
  back: 'Back',
  templateNameLabel: 'Name',
  templateNameHint:
    'How the form lists it. Up to 50 characters, one name per template in this channel.',
  templatePrefixLabel: 'Title prefix',
  templatePrefixHint: 'Put in front of the title, e.g. [Access]. Up to 100 characters.',
  templateSkeletonLabel: 'Note skeleton',
  templateSkeletonHint:
    'The note starts as this when it is still empty, e.g. a line per question to answer. Up to 2000 characters.',
  templateApproverLabel: 'Default approver',
  templateStepsLabel: 'Then also ask (steps after the first)',
  templateStepsHint:
    'One a line, in order: a login, or nearest leader, second-level leader, product-line leader. Each starts once the step before is approved.',
  templateStepsProblem: (p: StepsProblem) =>
    p.code === 'too-many'
      ? `At most ${p.limit} steps after the first.`
      : `Not a login nor a leader rule: ${p.line}`,
  templateApproverHint:
    'Leave it empty to keep the approver the form suggests (the requester’s nearest leader).',
  templateProblem: (p: TemplateProblem) =>
    p.code === 'required'
      ? 'Please give it a name.'
      : p.code === 'too-long'
        ? p.asSent
          ? `Too long as the approval service stores it (emoji become :name: codes): ${p.length} characters, at most ${p.limit}.`
          : `Too long: ${p.length} characters, at most ${p.limit}.`
        : p.code === 'name-taken'
          ? 'This channel already has a template of that name.'
          : p.code === 'too-many'
            ? `This channel has ${p.limit} templates, the most it may have: remove one first.`
            : 'This template was removed meanwhile; close this and add it again.',
  templateMakesTooLong: (
    name: string,
    field: 'title' | 'note',
    part: 'titlePrefix' | 'noteSkeleton',
    p: { length: number; limit: number },
  ) =>
    `The template “${name}” makes the ${field} too long for the approval service: its ${part === 'titlePrefix' ? 'title prefix' : 'note skeleton'} is ${p.length} characters as sent (emoji become :name: codes), at most ${p.limit}. Pick no template, or ask a channel member to shorten it (/approve templates).`,
  templatesInDm:
    'Templates belong to a channel. Run `/approve templates` in the channel whose templates you want to see or change.',
  templatesAppNotIn: (channel: string) =>
    `The app is not in <#${channel}>, so it cannot post requests there, and templates would not be offered. Invite it first with /invite @Approvals.`,
  templatesNotMember: (channel: string) =>
    `Only members of <#${channel}> may change its templates. Nothing was opened or changed.`,
  templatesNotAdmin: (channel: string) =>
    `In this workspace only its admins and owners may change request templates, each in the channels they are members of (<#${channel}> here). Nothing was opened or changed.`,
  templatesUnsure:
    'Slack could not tell right now whether you are in this channel, so nothing was opened or changed. Try again in a minute.',
  templatesChecking: ':hourglass_flowing_sand: Checking this channel…',
  templatesNotForYou: (channel: string) =>
    `The templates of <#${channel}> are for its members, and Slack did not confirm that you are one: nothing was filled in. The form is as you left it.`,
  templateStillChecking:
    'Still checking that you are in this channel — press Save again in a moment. Nothing was saved yet.',
  templateApproverStillChecking:
    'Still checking this person with Slack — press Save again in a moment. Nothing was saved yet.',
  templatesFailed:
    'Could not show this channel’s templates: something went wrong on our side. Close this and run `/approve templates` again.',
  requestAgain: 'Request again',
  requestedAgainOf: (ref: string) => `:repeat: Requested again after ${ref}.`,
  requestedAgainAs: (ref: string) => `:repeat: Requested again as ${ref}.`,
  requestedAgain: ':repeat: Requested again.',
  onlyRequesterAgain: (requester: string) =>
    `Only ${requester}, who requested it, can request it again.`,
  againUnknown: 'That approval is no longer known to the app, so it cannot be requested again.',
  alreadyRequestedAgain: (djbh: string) =>
    `That request was already requested again, as \`${djbh}\`; it can be requested again only once.`,
  againNotInChannel: (channel: string) =>
    `You are no longer a member of <#${channel}>, where the first request was posted, so the new one is in your direct messages with the app instead: posted there, the channel's members would read it.`,
  submitting: ':hourglass_flowing_sand: Starting the approval in the approval service…',
  checking: ':hourglass_flowing_sand: Checking your request…',
  fixAndResubmit: (problems: string) => `Please correct this and submit again: ${problems}`,
  submitted: (djbh: string) => `:white_check_mark: Approval *${djbh}* started.`,
  postedInDmInstead: (channel: string) =>
    `The app is not a member of <#${channel}>, so the request is in your direct messages with the app, and decisions will appear in its thread. To use the channel next time, invite the app with /invite.`,
  postingSoon: 'The request will be posted in a moment; decisions will appear in its thread.',
  postedInOurDm:
    'The request is posted in your direct messages with the app; decisions will appear in its thread.',
  postedInThread: (channel: string) =>
    `The request is posted in the message's thread in <#${channel}>, and decisions will appear there.`,
  postedWhere: (channel: string) =>
    `The request is posted in <#${channel}>, and decisions will appear in its thread.`,
  changed: (what: string) => `Your text was adjusted for the approval service: ${what}.`,
  changeNames: {
    quote: "' became ’",
    emoji: 'emoji were written as :names:',
    'unsupported-character': 'characters it cannot store became □',
  } satisfies Record<TextChange, string>,
  problem: (field: 'title' | 'note' | 'approver', p: DraftProblem) =>
    p.code === 'required'
      ? field === 'approver'
        ? 'Choose who should approve.'
        : 'Please fill this in.'
      : p.code === 'too-long'
        ? `Too long for the approval service: ${p.length} characters, at most ${p.limit}.`
        : 'You cannot approve your own request; choose someone else.',
  approverWithoutEmail:
    'This person has no e-mail address in Slack that the app can read, so they cannot be found in the approval service.',
  approverIsBot: 'Choose a person, not an app.',
  approverUnknownToService: (login: string) =>
    `The approval service does not know ${login}, so nobody could ever decide this request there. Choose someone with an account in the approval service, or ask an admin to link this person's Slack account to their login.`,
  templateApproverDeactivated: (name: string) =>
    `${name}’s Slack account is deactivated, so requests from this template could not reach them. Choose someone else, or no one.`,
  templateNoteShown: (skeleton: string) => `Note starts as:\n${skeleton}`,
  requesterUnknown:
    'The app could not read your e-mail address from Slack, so it cannot start an approval for you.',
  serviceDown:
    'The approval service is not answering right now. Nothing was started; your text is kept below, so try again in a few minutes.',
  serviceMaybeCreated: (web?: string) =>
    `The approval service did not answer in time. The approval may have been created anyway, so check ${web ? `<${web}|the approval service>` : 'the approval service'} before submitting again. Your text is kept below.`,
  serviceCredentials:
    'The approval service refused this app’s credentials, so nothing was started. Please tell whoever runs this app (APPROVAL_APP_NAME / APPROVAL_APP_KEY). Your text is kept below.',
  serviceTooLong: (field: string, limit: number | undefined) =>
    `The ${field.toLowerCase()} is longer than the approval service accepts${limit ? ` (${limit} characters)` : ''}. Please shorten it; your text is kept below.`,
  serviceUnstorable: (field: string) =>
    `The ${field.toLowerCase()} holds a character the approval service cannot store. Please remove it; your text is kept below.`,
  yourLogin: 'Your login',
  serviceRefused: (said: string) =>
    `The approval service refused the request: “${said}”. Nothing was started; your text is kept below.`,
  notSaved: (djbh: string) =>
    `Approval *${djbh}* was started in the approval service, but this app could not save it, so its decision will not reach Slack. Follow it in the approval service.`,
  status: (d: Decision) =>
    `${{ pending: ':hourglass_flowing_sand: Pending', approved: ':white_check_mark: Approved', rejected: ':x: Rejected' }[d]} · ${SERVICE_WORDS[d]}`,
  statusPlain: (d: Decision) =>
    `${{ pending: 'Pending', approved: 'Approved', rejected: 'Rejected' }[d]} · ${SERVICE_WORDS[d]}`,
  requestHeader: 'Approval request',
  requester: 'Requester',
  approver: 'Approver',
  number: 'Approval number',
  statusLabel: 'Status',
  followInThread: 'Decisions from the approval service appear in this thread.',
  openInService: 'Open in approval service',
  requestFallback: (title: string, djbh: string, d: Decision) =>
    `Approval request: ${title} (${djbh}) — ${en.statusPlain(d)}`,
  // The requester is named first: Slack notifies nobody of replies in a thread the app started.
  decided: (d: Decision, by: string, requester: string) => `${requester} ${en.status(d)} by ${by}`,
  decidedFallback: (d: Decision, by: string, requester: string) =>
    `${requester} ${en.statusPlain(d)} by ${by}`,
  ended: (requester: string) =>
    `${requester} :heavy_minus_sign: The approval service closed this approval without a decision, so the app stopped following it.`,
  stepSkipped: (position: number, who: string, why: 'requester' | 'approved-earlier') =>
    why === 'requester'
      ? `:fast_forward: Step ${position} skipped: it would go to ${who}, who asked for this request.`
      : `:fast_forward: Step ${position} skipped: ${who} approved an earlier step already.`,
  stepUncertain: (requester: string, position: number, who: string) =>
    `${requester} :warning: Step ${position} (${who}) may or may not have started in the approval service: the app lost the service’s answer. Look in the service for it. If it is there, ${who} decides there as usual; if it is not, press *Start step ${position}*.`,
  chainStepFailed: (requester: string, position: number, who: string) =>
    `${requester} :no_entry: Step ${position}${who ? ` (${who})` : ''} could not be started: the service does not know that approver, or the requester has no such leader. The request stops here; ask again with another approver.`,
  startChainStep: (position: number) => `Start step ${position}`,
  stepOfRequest: (position: number, steps: number) => `Step ${position} of ${steps}`,
  laterStepsProblem: (p: LaterStepsProblem) =>
    `The step's later steps are not usable, so nothing was started: ${
      p.code === 'too-many'
        ? `at most ${p.limit} steps after the first.`
        : p.code === 'not-a-step'
          ? `"${p.line}" is not a login nor a leader rule (nearest leader, second-level leader, product-line leader).`
          : p.code === 'no-login'
            ? `the app knows no approval-service login for <@${p.chatId}>.`
            : `the approval service does not know ${p.login}.`
    }`,
  confirmLaterStepsLabel: 'Then also ask',
  stepChainFailed: (position: number, djbh: string) =>
    `Step ${position} of request ${djbh} could not be started (the service does not know that approver, or the requester has no such leader), so the request stopped there.`,
  stepDecider: (position: number, who: string, how: string) => `${position}. ${who}: ${how}`,
  stepState: {
    waiting: 'not started',
    due: 'starting',
    starting: 'starting',
    started: 'waiting',
    approved: 'approved',
    rejected: 'rejected',
    stopped: 'ended without a decision',
    skipped: 'skipped',
    uncertain: 'may have started: see the thread',
    failed: 'could not start',
  } as Record<string, string>,
  stepProgress: (position: number, steps: number, who: string, state: string) =>
    `Step ${position} of ${steps}: ${who} — ${state}`,
  onlyRequesterStartsStep: 'Only the person who asked for this request can start its steps.',
  stepStartsAgain: (position: number) =>
    `Step ${position} starts within a minute; its request appears in this thread.`,
  stepNotUncertain: (position: number) =>
    `Step ${position} is no longer waiting to be started: nothing was done.`,
  vanished: (requester: string, djbh: string) =>
    `${requester} :grey_question: The approval service has not known approval \`${djbh}\` for a day, so the app stopped following it. Ask whoever runs the approval service.`,
  closedStatus: ':heavy_minus_sign: Closed without a decision',
  notFollowedStatus: `:zzz: No longer followed here · ${SERVICE_WORDS.pending}`,
  backToPending: 'The approval is pending again in the approval service.',
  aboutApproval: (title: string, djbh: string) =>
    `About your request *${title}* \`${djbh}\` (the app can no longer post in its thread):`,
  gaveUp: (days: number) =>
    `:zzz: No decision after ${days} days, so this app stopped following the approval here. It is still open in the approval service.`,
  approverDm: (requester: string) =>
    `${requester} asks for your approval. Decide in the approval service; the result will appear in the request’s thread.`,
  approverNotOnSlack: (login: string) =>
    `The approver ${login} is not on Slack, so the app could not message them; the approval service notifies them itself.`,
  approverUnreachable: (approver: string) =>
    `The app cannot reach the approver ${approver} on Slack (their account is deactivated or cannot be found), so they get no message or reminder here; the approval service still notifies them itself.`,
  approverTold: (approver: string) => `${approver} was told in a direct message.`,
  viewThread: 'View request',
  lookForNumber: (djbh: string) =>
    `In the approval service, *Open in approval service* shows your approvals, newest first: decide the one numbered \`${djbh}\`.`,
  reminderDm: (requester: string, waited: string) =>
    `:bell: Reminder: ${requester} has been waiting ${waited} for your approval. Decide in the approval service.`,
  reminderNote: (approver: string, n: number) => `:bell: Reminded ${approver} (reminder ${n}).`,
  handedOverNote: (from: string, to: string) =>
    `:arrow_right: The approval service handed this from ${from} to ${to}: ${to} is the approver now.`,
  /** The day's one reminder to an approver with several approvals waiting, and its lines. */
  reminderDigest: (count: number) =>
    `:bell: Reminder: ${count} approvals are waiting for you. Decide in the approval service.`,
  digestLine: (title: string, djbh: string, requester: string, waited: string) =>
    `${title} (${djbh}) from ${requester}, waiting ${waited}`,
  digestMore: (n: number) => `…and ${n} more: see the app’s Home tab.`,
  /** In a list of what waits for someone, an approval only escalated to them. */
  escalatedToYou: (approver: string, waited: string) =>
    `:arrow_up: escalated to you: waiting for ${approver} for ${waited}`,
  /** A leader's escalations together: one DM listing the approvals escalated to them, and its lines. */
  escalationDigest: (count: number) =>
    `:arrow_up: ${count} approvals were escalated to you: their approvers have not answered reminders. You are told as their leader in the approval service; only each approver can decide, there.`,
  escalationDigestLine: (
    title: string,
    djbh: string,
    requester: string,
    approver: string,
    waited: string,
  ) => `${title} (${djbh}) from ${requester}: waiting for ${approver} for ${waited}`,
  requestAgainHint: 'You can *Request again* from someone else.',
  /** How long someone has waited, in the largest whole unit: minutes, hours or days. */
  waited: (ms: number) => {
    const [n, unit] = wholeUnits(ms);
    return `${n} ${unit}${n === 1 ? '' : 's'}`;
  },
  escalationDm: (requester: string, approver: string, waited: string, reminders: number) =>
    `:arrow_up: ${requester} has been waiting ${waited} for ${approver} to decide on this request, and ${approver} has not answered ${reminders === 1 ? 'a reminder' : `${reminders} reminders`}. You are told once, as their leader in the approval service; only ${approver} can decide it, there.`,
  /**
   * `reminders`: those that went unanswered for a full interval; `sent`: every reminder the thread
   * has noted, which may be more (the newest had no time yet), said so the counts agree.
   */
  escalationNote: (leader: string, approver: string, reminders: number, sent = reminders) =>
    `:arrow_up: ${approver} did not answer ${reminders === 1 ? 'the reminder' : `${reminders} reminders`}${sent > reminders ? ` (reminder ${sent} is too recent to count)` : ''}, so this was escalated to ${leader}, their leader, once.`,
  appRestarting:
    'The app is restarting right now, so nothing was started. Please submit again in a moment.',
  somethingWrong:
    'Something went wrong on our side; please try again. If it keeps happening, tell whoever runs this app.',
  cannotStartNow:
    'The app cannot start approvals right now: its database is not answering. Nothing was started; your text is kept below. Please submit again in a few minutes.',
  help: (linking: AccountLinking) =>
    [
      '*/approve* — open the form to start an approval (`/approve New laptop` fills in the title)',
      '*/approve status &lt;number&gt;* — ask the approval service about an approval now',
      '*/approve list* — your open requests, and what waits for you',
      ...{
        self: [
          '*/approve link* — link your approval-service account (when your Slack e-mail is not your login there)',
          '*/approve unlink* — remove that link',
        ],
        admin: [
          '*/approve link* — when your Slack e-mail is not your approval-service login: what to ask an admin, who links it for you',
        ],
        off: [
          '*/approve link* — your approval-service login is your Slack e-mail here (linking another is turned off)',
        ],
      }[linking],
      '*/approve templates* — this channel’s request templates (title prefix, note skeleton, default approver): add, edit or remove them, if you are in the channel; the form offers them here',
      '*/approve report* — for workspace admins and owners: how long approvals took in the last 30 days, and who they wait for',
      '*/approve help* — this help',
      '*Request approval* in a message’s ⋯ menu — the form about that message; the request joins its thread',
      '*Request approval* in the ⚡ shortcuts menu — the form from anywhere, posted where you pick',
      '*Request approval* in Workflow Builder — a workflow step that waits for the decision',
      '*Request again* on your request that was rejected, ended or given up, or whose approver cannot be reached (also on the app’s Home) — the form again with its title and note',
      'The form says when the approver is away (their Slack status, or a deactivated account) and suggests the next leader up',
      'Away for a while? On the app’s Home, set a delegate: new requests for you go to them until the day you are back',
      'When the approver leaves reminders unanswered, their own leader may get one message about it (escalation, when this workspace turns it on)',
    ].join('\n'),
  statusOf: (djbh: string, status: string) => `Approval \`${djbh}\`: ${status}`,
  statusTitle: (title: string) => `*${title}*`,
  // The same answer whether the number does not exist or is not theirs to see, so that numbers
  // cannot be probed.
  // The try-again is said for every number, so it gives nothing away either.
  statusUnknown: (djbh: string) =>
    `There is no approval \`${djbh}\` that you can see: the approval service does not know it, or it is not yours to see. Check the number; if you expected to see one, try again in a minute.`,
  statusInvalid: (text: string) =>
    `“${text}” is not an approval number (letters and digits, like 9XFHBJySvnhh).`,
  statusMissing: 'Which approval? Use `/approve status &lt;number&gt;`.',
  statusEnded: 'Decided',
  statusApprover: (who: string) => `Approver: ${who}`,
  serviceUnavailableNow:
    'The approval service is not answering right now; try again in a few minutes.',
  serviceRejectedNow: (said: string) => `The approval service refused the question: “${said}”.`,
  listTitleMine: 'Your open requests',
  listTitleWaiting: 'Waiting for you',
  listNone: 'Nothing.',
  listMore: (n: number) => `…and ${n} more. Open the app’s Home tab for the full list.`,
  noLogin: (linking: AccountLinking) =>
    `The app does not know your login in the approval service: your Slack profile shows no e-mail. ${
      {
        self: 'Use `/approve link`.',
        admin:
          'Ask an admin to link your Slack account to your login (`/approve link` says what to send them).',
        off: 'Ask whoever runs this app: linking accounts is turned off here.',
      }[linking]
    }`,
  /** `current`: the login the app uses now, and whether an admin's link (not the e-mail) gives it. */
  linkByAdmin: (userId: string, current: { login: string; byLink: boolean } | null) =>
    `In this workspace an admin links Slack accounts to approval-service logins; you cannot do it yourself. ${
      !current
        ? 'The app knows no login for you now (your Slack profile shows no e-mail).'
        : current.byLink
          ? `The app uses *${current.login}* now: an admin linked your Slack account to it.`
          : `The app uses *${current.login}* (your Slack e-mail) now.`
    } If that is not your login, send an admin your Slack member ID, \`${userId}\`, and your login in the approval service; they link them with \`npm run accounts -- add ${userId} <your login>\`.`,
  linkingOff: (login: string | null) =>
    `Linking accounts is turned off in this workspace: your login in the approval service is your Slack e-mail${
      login ? `, *${login}*` : ', and your Slack profile shows none'
    }. If that is not your login there, ask whoever runs this app.`,
  unlinkByAdmin:
    'In this workspace links are made and removed by an admin: ask one to remove yours (`npm run accounts -- remove <your Slack member ID>`).',
  linkTitle: 'Link your account',
  linkSubmit: 'Link',
  linkLabel: 'Session token of the approval service',
  linkHint:
    'In the approval service’s web page, open the browser’s developer tools → Application (Storage) → Cookies and copy the value of the cookie named sid. The app uses it once to read your login and does not keep it.',
  linkChecking: ':hourglass_flowing_sand: Asking the approval service who you are…',
  linked: (name: string, login: string) =>
    `:link: Linked as *${name}* (${login}). The app now uses this login for your requests, approvals and Home.`,
  linkNotLoggedIn:
    'The approval service says this session is not logged in or has expired. Log in to its web page again and copy a fresh value.',
  linkSsoError: (said: string) =>
    `The approval service could not check this session (${said}). Log in again and copy a fresh value.`,
  linkEmpty: 'Paste the value of the sid cookie.',
  linkTaken: (login: string) =>
    `*${login}* is linked to another Slack account already, and one login belongs to one person, so nothing was linked. If it is yours, ask an admin to remove that link (\`npm run accounts -- remove <member ID>\`), or unlink it there with \`/approve unlink\`, then link again.`,
  unlinked:
    'Your approval-service link is removed; the app uses your Slack e-mail as your login again.',
  nothingToUnlink: 'You have no linked approval-service account.',
  homeWaiting: 'Waiting for me',
  homeMine: 'My requests',
  homeNone: 'Nothing here.',
  homeMore: (n: number) => `…and ${n} more.`,
  homeIntro:
    'Type `/approve` in any channel to start an approval. Decisions appear in each request’s thread.',
  ageDays: (n: number) => (n === 1 ? '1 day ago' : `${n} days ago`),
  ageHours: (n: number) => (n === 1 ? '1 hour ago' : `${n} hours ago`),
  ageMinutes: (n: number) => (n <= 1 ? 'just now' : `${n} minutes ago`),
  threadLink: 'thread',
  serviceLink: 'approval service',
  homeLinkedAs: (name: string, login: string) =>
    `Linked to the approval service as ${name} (${login}).`,
  homeLoginFromEmail: (login: string) =>
    `Your approval-service login: ${login} (from your Slack e-mail).`,
  // Delegates while away (approvals/delegation.ts).
  delegatedTo: (name: string, until: Date, timeZone: string | undefined, delegate: string) =>
    `:palm_tree: ${name} is away until ${shortDate('en-GB', until, timeZone)}; their delegate is ${delegate}. You may still choose anyone.`,
  delegatedToStep: (name: string, until: Date, timeZone: string | undefined, delegate: string) =>
    `:palm_tree: ${name} is away until ${shortDate('en-GB', until, timeZone)}; their delegate is ${delegate}.`,
  homeDelegateHeader: 'While I am away',
  homeDelegateNone:
    'Away for a while? Send new requests for you to someone else until you are back.',
  homeDelegateActive: (
    delegate: string,
    until: Date,
    timeZone: string | undefined,
    waiting: number,
  ) =>
    `New requests go to ${delegate} until ${shortDate('en-GB', until, timeZone)}${
      waiting === 0
        ? '.'
        : `; ${waiting === 1 ? 'the 1 already waiting stays' : `the ${waiting} already waiting stay`} with you (the approval service decides who may decide them).`
    }`,
  delegateSet: 'Set a delegate',
  delegateChange: 'Change',
  delegateClear: 'Clear',
  delegateModalTitle: 'Delegate while away',
  delegateToLabel: 'Send new requests for me to',
  delegateUntilLabel: 'Until (the day you are back)',
  delegateHint:
    'Requests already waiting for you stay with you: the approval service decides who may decide them.',
  delegateSave: 'Save',
  delegateYourself: 'You cannot be your own delegate; pick someone else.',
  delegatePast: 'Pick a day after today.',
  delegateTooFar: 'Pick a day within a year from today.',
  delegateDeactivated: (name: string) =>
    `${name}’s Slack account is deactivated, so your requests could not reach them; pick someone else.`,
  delegateStillChecking:
    'Still checking your delegate — press Save again in a moment. Nothing was saved yet.',
  delegateUnknown: (name: string) =>
    `The approval service does not know ${name}, so they could not decide your requests; pick someone else.`,
  delegateNoLogin: (name: string) =>
    `The app cannot find ${name}'s approval-service login; pick someone else.`,
  delegateServiceDown:
    'The approval service could not be reached to check your delegate; try again in a moment.',
  delegateNoOwnLogin:
    'The app does not know your approval-service login, so it cannot delegate for you.',
  delegateCouldNotSave: 'Your delegate could not be saved; try again in a moment.',
  reportRefused:
    'Reports count every approval in this workspace, so they are for its admins and owners only. Ask one of them, or an operator (`npm run report`).',
  reportUnsure:
    'Could not check with Slack whether you administer this workspace. Try again in a moment.',
  reportHeading: (days: number) =>
    `*Approvals started in the last ${days} days* (time to decision in working hours)`,
  reportTotal: (count: number, share: string, median: string, p90: string) =>
    `${count} started · ${share} of those decided were approved · median ${median} · 90th percentile ${p90}`,
  reportOpen: (open: number, stale: number, bands: readonly number[]) =>
    `Still open, whenever started: ${open} (${stale} waiting over a week) · under a day ${bands[0]}, 1–3 days ${bands[1]}, 3–7 days ${bands[2]}, over a week ${bands[3]}`,
  reportSlowestApprovers: '*Slowest approvers*',
  reportSlowestDepartments: '*Slowest departments*',
  reportGroup: (group: string, decided: number, median: string, p90: string, open: number) =>
    `• ${group}: ${decided} decided, median ${median}, 90th percentile ${p90}, ${open} open`,
  reportNone: 'None decided yet.',
  reportHours: (hours: number | null) => (hours === null ? '–' : `${hours} h`),
  reportFailed: 'Could not put the report together: something went wrong on our side.',
};

export type Messages = typeof en;

const zh: Messages = {
  modalTitle: '发起审批',
  shortcutOnOwnMessage:
    '这条消息来自审批应用本身（一条审批申请或它的进展），不能再为它发起审批。*请在这条消息的讨论串里跟进和讨论该审批。* 要发起新的审批，请输入 `/approve`，或在某人写的消息上使用 ⋯ *Request approval*（发起审批）。',
  submit: '提交',
  cancel: '取消',
  close: '关闭',
  titleLabel: '标题',
  titleHint: '最多 200 个字符。',
  stepNoApprover: (why) => `该步骤没有指定审批人。${why}`,
  confirmAsk: (startedBy) =>
    startedBy
      ? `${startedBy} 运行了一个工作流，要*以你的名义*发起审批。`
      : '有一个工作流要*以你的名义*发起审批。',
  confirmApproverSuggested: '组织架构中你的直属领导',
  confirmWhere: (channel) => (channel ? `在 <#${channel}>` : '在你与本应用的私信中'),
  confirmPostedLabel: '发布位置',
  confirmDeadline: (minutes) =>
    `只有你点击“发起”才会发起审批。如果 ${minutes} 分钟内没有回应，该工作流步骤将结束，不会发起任何审批。`,
  confirmStart: '发起',
  confirmDecline: '拒绝',
  confirmFallback: (title) => `有一个工作流要以你的名义发起审批：${title}`,
  confirmStarted: ':white_check_mark: 你已确认，审批已发起。',
  confirmDeclined: '你已拒绝，没有发起任何审批。',
  confirmExpired: '未在时限内回应，没有发起任何审批。',
  confirmFailed: (why) => `你已确认，但审批未能发起：${why}`,
  confirmOnlyRequester: (requester) => `只有 ${requester} 可以回应：审批将以其名义发起。`,
  confirmGone: '此请求已被回应，或已超过时限。',
  confirmModalTitle: '发起这项审批？',
  confirmInPlace: '你运行的工作流将*以你的名义*发起这项审批。只有你点击“发起”才会发起审批。',
  stepCancelled: '申请人在发起前取消了这项审批，没有发起任何审批。',
  stepStartInterrupted:
    '本应用在发起这项审批时中断，没有记录到本次运行的审批。审批系统中仍可能已有该审批：再次运行工作流之前请先在审批系统中确认。',
  stepDeclined: '申请人拒绝以其名义发起此审批，没有发起任何审批。',
  stepExpired: (minutes) => `申请人未在 ${minutes} 分钟内确认，因此没有以其名义发起审批。`,
  stepNotAsked: '无法请申请人确认该工作流步骤（无法联系到其与本应用的私信），没有发起任何审批。',
  stepTooLongToShow:
    '该步骤的标题和说明过长，无法完整展示给申请人；未被完整查看的内容不会发起。请缩短说明。没有发起任何审批。',
  confirmNotAsShown: '将要发起的内容与你看到的不完全一致，因此没有发起任何审批。请重新运行工作流。',
  stepFailed: (reason, djbh, days) =>
    reason === 'gave-up'
      ? `审批 ${djbh} 在 ${days} 天内没有结果，本应用已停止跟进。它在审批系统中仍然有效。`
      : `审批系统已不认识审批 ${djbh}，无法得知其结果。请联系审批系统的管理员。`,
  titleTooLong: (length, limit) =>
    `共 ${length} 个字符，审批系统最多接受 ${limit} 个。请先缩短再提交。`,
  noteLabel: '说明',
  noteHint: (limit) => `需要审批的内容和原因。最多 ${limit} 个字符。`,
  noteCut: (length, limit) =>
    `:warning: 之前的说明共 ${length} 个字符，而此栏最多 ${limit} 个，因此上面只填入了前 ${limit} 个字符。请在提交前精简为要点；完整的原说明仍保留在审批系统中的原审批里。`,
  approverLabel: '审批人',
  choosePerson: '选择一个人…',
  channelLabel: '发布到',
  channelHint: '留空则发布在你与本应用的私信中。',
  chooseChannel: '选择一个频道…',
  approverLoginLabel: '或填写审批人在审批系统中的账号',
  approverLoginHint: (login) =>
    `${login} 不在 Slack 上。保留此账号即可仍由他审批，或清空后在上方选择其他人。`,
  approverLoginInvalid: '账号只能包含字母、数字和 . - _ @（例如 name@corp.example）。',
  lookingUp: ':hourglass_flowing_sand: 正在审批系统中查找你的信息…',
  chain: (chain) => `:office: ${chain}`,
  suggested: (name) => `建议审批人：${name}（你的直属领导）。你也可以选择其他人。`,
  noEmail:
    '应用无法读取你 Slack 资料中的邮箱，因此无法在审批系统中找到你。请联系 Slack 管理员允许应用查看邮箱。',
  lookupFailed: '暂时无法连接审批系统来推荐审批人，请自行选择。',
  unknownPerson: (login) => `审批系统中还没有 ${login} 的信息，无法推荐审批人，请自行选择。`,
  noLeader: '审批系统中没有你的领导信息，请自行选择审批人。',
  leaderNotOnSlack: (login) => `你的直属领导 ${login} 不在 Slack 上，请自行选择审批人。`,
  awayUntil: (name, until, timeZone, status) =>
    `:warning: ${name} 不在岗，${shortDate('zh-CN', until, timeZone)} 前回来：${status}`,
  deactivated: (name) => `:warning: ${name} 的 Slack 账号已停用。`,
  suggestedInstead: (name) => `改为建议上一级领导 ${name} 审批；你仍可选择任何人。`,
  nextLeaderUp: (name) => `上一级领导是 ${name}；你仍可发给你选择的人。`,
  nobodyAvailableAbove: '上级中没有其他可用的审批人；你仍可发给 TA。',
  templateLabel: '模板',
  chooseTemplate: '从模板开始…',
  templateHint: '本频道的模板：选择后会填入标题、说明和审批人。',
  templateApplied: (name) => `:memo: 已按模板 *${name}* 填写。`,
  templateNoteKept: '你写的说明已保留，未填入模板的说明。',
  templateGone: '该模板已被删除；请选择其他模板，或自行填写表单。',
  fromTemplate: (name) => `:memo: 来自模板 *${name}*`,
  templatesTitle: '申请模板',
  templatesIntro: (channel, n, max) =>
    `<#${channel}> 的模板：${n} 个（最多 ${max} 个）。在本频道发起审批时，表单会提供这些模板。频道成员都可以添加、修改或删除模板，每次修改都会被记录。`,
  templatesNone: '还没有模板。',
  templateAdd: '添加模板',
  templateEdit: '修改',
  templateRemove: '删除此模板',
  templateRemoveConfirmTitle: '删除模板？',
  templateRemoveConfirm: (name) => `删除 *${name}*？删除后表单不再提供它；用它发起的申请仍会注明。`,
  templateRemoveYes: '删除',
  templateFull: (max) => `本频道已有 ${max} 个模板，已达上限：请先删除一个再添加。`,
  templatePrefixShown: (prefix) => `标题前缀：${prefix}`,
  templateApproverShown: (who) => `审批人：${who}`,
  templateAddedBy: (who, at, timeZone) => `${who} 于 ${shortDate('zh-CN', at, timeZone)} 添加`,
  templateEditedBy: (who, at, timeZone) => `${who} 于 ${shortDate('zh-CN', at, timeZone)} 修改`,
  templatesHistory: '*最近的修改*',
  templateChange: (change, name, who, timeZone) =>
    `${shortDate('zh-CN', change.at, timeZone)}：${who} ${{ added: '添加了', edited: '修改了', removed: '删除了' }[change.action]} *${name}*`,
  templateEditorNew: '新模板',
  templateEditorEdit: '修改模板',
  save: '保存',
  back: '返回',
  templateNameLabel: '名称',
  templateNameHint: '表单中显示的名称。最多 50 个字符，本频道内不能重名。',
  templatePrefixLabel: '标题前缀',
  templatePrefixHint: '加在标题前面，例如 [权限]。最多 100 个字符。',
  templateSkeletonLabel: '说明模板',
  templateSkeletonHint: '说明为空时以此开头，例如每行一个需要回答的问题。最多 2000 个字符。',
  templateApproverLabel: '默认审批人',
  templateApproverHint: '留空则沿用表单建议的审批人（申请人的直属领导）。',
  templateStepsLabel: '之后还需审批（第一步之后的步骤）',
  templateStepsHint:
    '每行一个，按顺序：登录名，或 直属领导、二级领导、产品线领导。上一步同意后才发起下一步。',
  templateStepsProblem: (p) =>
    p.code === 'too-many'
      ? `第一步之后最多 ${p.limit} 步。`
      : `不是登录名，也不是领导规则：${p.line}`,
  templateProblem: (p) =>
    p.code === 'required'
      ? '请填写名称。'
      : p.code === 'too-long'
        ? p.asSent
          ? `按审批系统保存的形式太长（表情会写成 :名称: 代码）：${p.length} 个字符，最多 ${p.limit} 个。`
          : `太长：${p.length} 个字符，最多 ${p.limit} 个。`
        : p.code === 'name-taken'
          ? '本频道已有同名模板。'
          : p.code === 'too-many'
            ? `本频道已有 ${p.limit} 个模板，已达上限：请先删除一个。`
            : '该模板已被删除；请关闭后重新添加。',
  templateMakesTooLong: (name, field, part, p) =>
    `模板“${name}”使${field === 'title' ? '标题' : '说明'}超出审批系统的长度限制：其${part === 'titlePrefix' ? '标题前缀' : '说明模板'}按发送形式为 ${p.length} 个字符（表情会写成 :名称: 代码），最多 ${p.limit} 个。请不选模板，或请频道成员缩短它（/approve templates）。`,
  templatesInDm: '模板属于频道。请在要查看或修改模板的频道中输入 `/approve templates`。',
  templatesAppNotIn: (channel) =>
    `本应用不在 <#${channel}> 中，无法在那里发布申请，也不会提供模板。请先用 /invite @Approvals 邀请本应用。`,
  templatesNotMember: (channel) =>
    `只有 <#${channel}> 的成员可以修改其模板。没有打开或修改任何内容。`,
  templatesNotAdmin: (channel) =>
    `在本工作区，只有管理员和所有者可以修改申请模板，且只能在自己所在的频道（此处为 <#${channel}>）中修改。没有打开或修改任何内容。`,
  templatesUnsure: 'Slack 暂时无法确认你是否在本频道中，因此没有打开或修改任何内容。请稍后再试。',
  templatesChecking: ':hourglass_flowing_sand: 正在检查本频道…',
  templatesNotForYou: (channel) =>
    `<#${channel}> 的模板仅供其成员使用，Slack 未能确认你是成员：没有填入任何内容，表单保持原样。`,
  templateStillChecking: '仍在确认你是否在本频道中——请稍后再按一次“保存”。尚未保存任何内容。',
  templateApproverStillChecking: '仍在向 Slack 确认此人——请稍后再按一次“保存”。尚未保存任何内容。',
  templatesFailed:
    '无法显示本频道的模板：我们这边出了点问题。请关闭后再运行一次 `/approve templates`。',
  requestAgain: '重新发起',
  requestedAgainOf: (ref) => `:repeat: 重新发起，原审批：${ref}。`,
  requestedAgainAs: (ref) => `:repeat: 已重新发起，新审批：${ref}。`,
  requestedAgain: ':repeat: 已重新发起。',
  onlyRequesterAgain: (requester) => `只有发起人 ${requester} 可以重新发起。`,
  againUnknown: '应用已不再记录该审批，无法重新发起。',
  alreadyRequestedAgain: (djbh) => `该审批已重新发起过（新审批 \`${djbh}\`），只能重新发起一次。`,
  againNotInChannel: (channel) =>
    `你已不在首次申请所在的 <#${channel}> 中，因此新申请发到了你与本应用的私信：若发在该频道，其成员都会看到。`,
  submitting: ':hourglass_flowing_sand: 正在审批系统中发起审批…',
  checking: ':hourglass_flowing_sand: 正在检查你的申请…',
  fixAndResubmit: (problems) => `请修改后重新提交：${problems}`,
  submitted: (djbh) => `:white_check_mark: 审批 *${djbh}* 已发起。`,
  postedInDmInstead: (channel) =>
    `本应用不在 <#${channel}> 中，因此申请已发到你与本应用的私信，审批结果会出现在该消息的讨论串中。下次可先用 /invite 邀请本应用进入频道。`,
  postingSoon: '申请稍后发布，审批结果会出现在其讨论串中。',
  postedInOurDm: '申请已发布在你与本应用的私信中，审批结果会出现在该消息的讨论串中。',
  postedInThread: (channel) =>
    `申请已发布在 <#${channel}> 中该消息的讨论串里，审批结果也会出现在那里。`,
  postedWhere: (channel) => `申请已发布在 <#${channel}>，审批结果会出现在该消息的讨论串中。`,
  changed: (what) => `为符合审批系统的要求，你的内容已调整：${what}。`,
  changeNames: {
    quote: "' 改为 ’",
    emoji: '表情改写为 :名称:',
    'unsupported-character': '无法保存的字符改为 □',
  },
  problem: (field, p) =>
    p.code === 'required'
      ? field === 'approver'
        ? '请选择审批人。'
        : '请填写此项。'
      : p.code === 'too-long'
        ? `超出审批系统的长度限制：${p.length} 个字符，最多 ${p.limit} 个。`
        : '不能审批自己的申请，请选择其他人。',
  approverWithoutEmail: '应用无法读取此人在 Slack 中的邮箱，因此无法在审批系统中找到他。',
  approverIsBot: '请选择一个人，而不是应用。',
  approverUnknownToService: (login) =>
    `审批系统中没有 ${login} 这个账号，这个申请将无人能够审批。请选择在审批系统中有账号的人，或请管理员把此人的 Slack 账号关联到其审批系统账号。`,
  templateApproverDeactivated: (name) =>
    `${name} 的 Slack 账号已停用，使用此模板的申请无法送达此人。请选择其他人，或不选。`,
  templateNoteShown: (skeleton) => `说明预填：\n${skeleton}`,
  requesterUnknown: '应用无法从 Slack 读取你的邮箱，因此无法为你发起审批。',
  serviceDown: '审批系统暂时没有响应，审批未发起。你填写的内容已保留，请稍后再试。',
  serviceMaybeCreated: (web) =>
    `审批系统没有及时响应，审批可能已经创建。再次提交前请先到${web ? `<${web}|审批系统>` : '审批系统'}确认。你填写的内容已保留。`,
  serviceCredentials:
    '审批系统拒绝了本应用的凭据，审批未发起。请联系本应用的管理员（APPROVAL_APP_NAME / APPROVAL_APP_KEY）。你填写的内容已保留。',
  serviceTooLong: (field, limit) =>
    `${field}超出审批系统允许的长度${limit ? `（${limit} 个字符）` : ''}。请缩短；你填写的内容已保留。`,
  serviceUnstorable: (field) => `${field}中有审批系统无法保存的字符，请删除；你填写的内容已保留。`,
  yourLogin: '你的账号',
  serviceRefused: (said) => `审批系统拒绝了该申请：“${said}”。审批未发起，你填写的内容已保留。`,
  notSaved: (djbh) =>
    `审批 *${djbh}* 已在审批系统中发起，但本应用未能保存，审批结果不会同步到 Slack。请在审批系统中跟进。`,
  // The service's own words are Chinese already: said once, not twice.
  status: (d) =>
    `${{ pending: ':hourglass_flowing_sand:', approved: ':white_check_mark:', rejected: ':x:' }[d]} ${SERVICE_WORDS[d]}`,
  statusPlain: (d) => SERVICE_WORDS[d],
  requestHeader: '审批申请',
  requester: '申请人',
  approver: '审批人',
  number: '审批单号',
  statusLabel: '状态',
  followInThread: '审批系统中的结果会出现在此讨论串中。',
  openInService: '在审批系统中打开',
  requestFallback: (title, djbh, d) => `审批申请：${title}（${djbh}）— ${zh.statusPlain(d)}`,
  decided: (d, by, requester) => `${requester} ${zh.status(d)}，审批人 ${by}`,
  decidedFallback: (d, by, requester) => `${requester} ${zh.statusPlain(d)}，审批人 ${by}`,
  ended: (requester) =>
    `${requester} :heavy_minus_sign: 审批系统已关闭此审批，没有给出结果；本应用已停止跟进。`,
  stepSkipped: (position, who, why) =>
    why === 'requester'
      ? `:fast_forward: 已跳过第 ${position} 步：该步审批人 ${who} 就是申请人。`
      : `:fast_forward: 已跳过第 ${position} 步：${who} 已在前面的步骤中同意。`,
  stepUncertain: (requester, position, who) =>
    `${requester} :warning: 第 ${position} 步（${who}）可能已在审批系统中发起，也可能没有：本应用没有收到审批系统的回复。请在审批系统中查看。若已存在，${who} 照常在那里审批；若不存在，请按 *发起第 ${position} 步*。`,
  chainStepFailed: (requester, position, who) =>
    `${requester} :no_entry: 第 ${position} 步${who ? `（${who}）` : ''}无法发起：审批系统不认识该审批人，或申请人没有这一级领导。此申请到此为止；请换一位审批人重新申请。`,
  startChainStep: (position) => `发起第 ${position} 步`,
  stepOfRequest: (position, steps) => `第 ${position} 步（共 ${steps} 步）`,
  laterStepsProblem: (p) =>
    `该步骤的后续步骤无法使用，没有发起任何审批：${
      p.code === 'too-many'
        ? `第一步之后最多 ${p.limit} 步。`
        : p.code === 'not-a-step'
          ? `“${p.line}”不是登录名，也不是领导规则（直属领导、二级领导、产品线领导）。`
          : p.code === 'no-login'
            ? `本应用不知道 <@${p.chatId}> 在审批系统中的登录名。`
            : `审批系统不认识 ${p.login}。`
    }`,
  confirmLaterStepsLabel: '之后还需审批',
  stepChainFailed: (position, djbh) =>
    `申请 ${djbh} 的第 ${position} 步无法发起（审批系统不认识该审批人，或申请人没有这一级领导），申请到此为止。`,
  stepDecider: (position, who, how) => `${position}. ${who}：${how}`,
  stepState: {
    waiting: '未开始',
    due: '正在发起',
    starting: '正在发起',
    started: '等待中',
    approved: '已同意',
    rejected: '已拒绝',
    stopped: '未经决定即结束',
    skipped: '已跳过',
    uncertain: '可能已发起：见讨论串',
    failed: '无法发起',
  },
  stepProgress: (position, steps, who, state) =>
    `第 ${position} 步（共 ${steps} 步）：${who} — ${state}`,
  onlyRequesterStartsStep: '只有提出此申请的人才能发起它的步骤。',
  stepStartsAgain: (position) => `第 ${position} 步将在一分钟内发起；其申请会出现在此讨论串中。`,
  stepNotUncertain: (position) => `第 ${position} 步已不在等待发起：未做任何操作。`,
  vanished: (requester, djbh) =>
    `${requester} :grey_question: 审批系统已有一天不认识审批单 \`${djbh}\`，本应用已停止跟进。请联系审批系统的管理员。`,
  closedStatus: ':heavy_minus_sign: 已关闭，没有结果',
  notFollowedStatus: `:zzz: 本应用已停止跟进 · ${SERVICE_WORDS.pending}`,
  backToPending: '该审批在审批系统中重新变为待办。',
  aboutApproval: (title, djbh) =>
    `关于你的申请 *${title}* \`${djbh}\`（本应用已无法在其讨论串中发言）：`,
  gaveUp: (days) => `:zzz: ${days} 天内没有结果，本应用已停止跟进此审批。它在审批系统中仍然有效。`,
  approverDm: (requester) =>
    `${requester} 请你审批。请在审批系统中处理，结果会出现在该申请的讨论串中。`,
  approverNotOnSlack: (login) =>
    `审批人 ${login} 不在 Slack 上，应用无法通知他；审批系统会自行通知。`,
  approverUnreachable: (approver) =>
    `应用在 Slack 上联系不到审批人 ${approver}（其账号已停用或无法找到），因此不会在此向其发送消息或提醒；审批系统仍会自行通知。`,
  approverTold: (approver) => `已私信通知 ${approver}。`,
  viewThread: '查看申请',
  lookForNumber: (djbh) =>
    `点击“在审批系统中打开”可看到你的审批列表（最新的在最上面）：请处理编号为 \`${djbh}\` 的那一条。`,
  reminderDm: (requester, waited) =>
    `:bell: 提醒：${requester} 已等待你审批 ${waited}。请在审批系统中处理。`,
  reminderNote: (approver, n) => `:bell: 已提醒 ${approver}（第 ${n} 次）。`,
  handedOverNote: (from, to) =>
    `:arrow_right: 审批系统已将此审批从 ${from} 转交给 ${to}：现在由 ${to} 审批。`,
  reminderDigest: (count) => `:bell: 提醒：有 ${count} 个审批等待你处理。请在审批系统中处理。`,
  digestLine: (title, djbh, requester, waited) =>
    `${title}（${djbh}），${requester} 发起，已等待 ${waited}`,
  digestMore: (n) => `……还有 ${n} 个：见本应用的首页（Home）标签。`,
  escalatedToYou: (approver, waited) => `:arrow_up: 已上报给你：等待 ${approver} 审批已 ${waited}`,
  escalationDigest: (count) =>
    `:arrow_up: 有 ${count} 个审批已上报给你：其审批人未回应提醒。你作为其在审批系统中的上级收到此消息；只有各自的审批人能在审批系统中审批。`,
  escalationDigestLine: (title, djbh, requester, approver, waited) =>
    `${title}（${djbh}），${requester} 发起：等待 ${approver} 审批已 ${waited}`,
  requestAgainHint: '你可以 *重新发起*，改请他人审批。',
  waited: (ms) => {
    const [n, unit] = wholeUnits(ms);
    return `${n} ${{ minute: '分钟', hour: '小时', day: '天' }[unit]}`;
  },
  escalationDm: (requester, approver, waited, reminders) =>
    `:arrow_up: ${requester} 已等待 ${approver} 审批此申请 ${waited}，${approver} 未回应 ${reminders} 次提醒。你作为其在审批系统中的上级收到此消息（仅此一次）；只有 ${approver} 能在审批系统中审批。`,
  escalationNote: (leader, approver, reminders, sent = reminders) =>
    `:arrow_up: ${approver} 未回应 ${reminders} 次提醒，已上报其上级 ${leader}（仅此一次）。${sent > reminders ? `第 ${sent} 次提醒刚发出不久，不计在内。` : ''}`,
  appRestarting: '本应用正在重启，因此没有发起任何审批。请稍后再提交一次。',
  somethingWrong: '我们这边出了点问题，请重试。如果一直出现，请联系本应用的管理员。',
  cannotStartNow:
    '本应用暂时无法发起审批：它的数据库没有响应。审批未发起，你填写的内容已保留。请几分钟后再提交。',
  help: (linking) =>
    [
      '*/approve* — 打开表单发起审批（`/approve 新电脑` 会预填标题）',
      '*/approve status &lt;单号&gt;* — 立即向审批系统查询某个审批',
      '*/approve list* — 你未完成的申请，以及等待你审批的事项',
      ...{
        self: [
          '*/approve link* — 关联你的审批系统账号（当 Slack 邮箱不是你在审批系统中的账号时）',
          '*/approve unlink* — 取消关联',
        ],
        admin: [
          '*/approve link* — 当 Slack 邮箱不是你的审批系统账号时：告诉你需要发给管理员什么，由管理员为你关联',
        ],
        off: [
          '*/approve link* — 在本工作区，你的审批系统账号就是 Slack 邮箱（关联其他账号的功能已关闭）',
        ],
      }[linking],
      '*/approve templates* — 本频道的申请模板（标题前缀、说明模板、默认审批人）：频道成员可添加、修改或删除；在本频道发起审批时表单会提供',
      '*/approve report* — 仅限工作区管理员和所有者：最近 30 天审批用时，以及在等谁审批',
      '*/approve help* — 显示本帮助',
      '消息 ⋯ 菜单中的 *Request approval* — 针对该消息发起审批，申请发布在该消息的讨论串中',
      '⚡ 快捷方式菜单中的 *Request approval* — 随处发起审批，发布到你选择的频道',
      'Workflow Builder 中的 *Request approval* — 等待审批结果的工作流步骤',
      '被拒绝、已结束、已放弃跟进或审批人无法联系的申请上（以及应用主页上）的 *重新发起* — 以原标题和说明重新打开表单',
      '审批人不在岗时（Slack 状态显示休假等，或账号已停用），表单会提示并建议上一级领导',
      '要离开一段时间？在应用主页设置代理人：你回来之前，发给你的新申请会转给 TA',
      '审批人未回应提醒时，其上级可能收到一条相关消息（上报，需本工作区开启）',
    ].join('\n'),
  statusOf: (djbh, status) => `审批 \`${djbh}\`：${status}`,
  statusTitle: (title) => `*${title}*`,
  statusUnknown: (djbh) =>
    `没有你可以查看的单号为 \`${djbh}\` 的审批：审批系统中没有它，或你无权查看。请检查单号；如果你确信应当能看到，请稍后再试。`,
  statusInvalid: (text) => `“${text}”不是审批单号（由字母和数字组成，例如 9XFHBJySvnhh）。`,
  statusMissing: '要查询哪个审批？请使用 `/approve status &lt;单号&gt;`。',
  statusEnded: '已结束',
  statusApprover: (who) => `审批人：${who}`,
  serviceUnavailableNow: '审批系统暂时没有响应，请稍后再试。',
  serviceRejectedNow: (said) => `审批系统拒绝了查询：“${said}”。`,
  listTitleMine: '你未完成的申请',
  listTitleWaiting: '等待你审批',
  listNone: '无。',
  listMore: (n) => `……还有 ${n} 项。打开应用的主页查看完整列表。`,
  noLogin: (linking) =>
    `应用不知道你在审批系统中的账号：你的 Slack 资料中没有邮箱。${
      {
        self: '请使用 `/approve link`。',
        admin:
          '请让管理员为你关联 Slack 账号与审批系统账号（`/approve link` 会告诉你需要发给管理员什么）。',
        off: '请联系本应用的管理员：本工作区已关闭账号关联。',
      }[linking]
    }`,
  linkByAdmin: (userId, current) =>
    `在本工作区，Slack 账号与审批系统账号由管理员关联，你无法自行关联。${
      !current
        ? '应用当前不知道你的账号（你的 Slack 资料中没有邮箱）。'
        : current.byLink
          ? `应用当前使用 *${current.login}*：管理员已将你的 Slack 账号关联到该账号。`
          : `应用当前使用 *${current.login}*（你的 Slack 邮箱）。`
    }如果这不是你的账号，请把你的 Slack 成员 ID \`${userId}\` 和你的审批系统账号发给管理员；管理员用 \`npm run accounts -- add ${userId} <你的账号>\` 关联。`,
  linkingOff: (login) =>
    `本工作区已关闭账号关联：你的审批系统账号就是 Slack 邮箱${login ? ` *${login}*` : '（你的 Slack 资料中没有邮箱）'}。如果这不是你在审批系统中的账号，请联系本应用的管理员。`,
  unlinkByAdmin:
    '在本工作区，关联由管理员建立和解除：请让管理员解除（`npm run accounts -- remove <你的 Slack 成员 ID>`）。',
  linkTitle: '关联账号',
  linkSubmit: '关联',
  linkLabel: '审批系统的会话令牌',
  linkHint:
    '在审批系统网页中打开浏览器开发者工具 → 应用（存储）→ Cookie，复制名为 sid 的 Cookie 的值。应用只用它读取一次你的账号，不会保存。',
  linkChecking: ':hourglass_flowing_sand: 正在向审批系统确认你的身份…',
  linked: (name, login) =>
    `:link: 已关联为 *${name}*（${login}）。你的申请、审批和主页都将使用此账号。`,
  linkNotLoggedIn: '审批系统表示该会话未登录或已过期。请重新登录审批系统网页并复制新的值。',
  linkSsoError: (said) => `审批系统无法验证该会话（${said}）。请重新登录并复制新的值。`,
  linkEmpty: '请粘贴 sid Cookie 的值。',
  linkTaken: (login) =>
    `*${login}* 已关联到另一个 Slack 账号；一个账号只属于一个人，因此未作关联。如果这是你的账号，请让管理员解除那个关联（\`npm run accounts -- remove <成员 ID>\`），或在那个 Slack 账号中用 \`/approve unlink\` 取消关联，然后再次关联。`,
  unlinked: '已取消关联审批系统账号；应用将重新使用你的 Slack 邮箱作为账号。',
  nothingToUnlink: '你没有关联审批系统账号。',
  homeWaiting: '等待我审批',
  homeMine: '我的申请',
  homeNone: '暂无。',
  homeMore: (n) => `……还有 ${n} 项。`,
  homeIntro: '在任意频道输入 `/approve` 即可发起审批。审批结果会出现在每个申请的讨论串中。',
  ageDays: (n) => `${n} 天前`,
  ageHours: (n) => `${n} 小时前`,
  ageMinutes: (n) => (n <= 1 ? '刚刚' : `${n} 分钟前`),
  threadLink: '讨论串',
  serviceLink: '审批系统',
  homeLinkedAs: (name, login) => `已关联审批系统账号 ${name}（${login}）。`,
  homeLoginFromEmail: (login) => `你的审批系统账号：${login}（来自 Slack 邮箱）。`,
  delegatedTo: (name, until, timeZone, delegate) =>
    `:palm_tree: ${name} ${shortDate('zh-CN', until, timeZone)} 前不在岗，委托 ${delegate} 代为审批；你仍可选择任何人。`,
  delegatedToStep: (name, until, timeZone, delegate) =>
    `:palm_tree: ${name} ${shortDate('zh-CN', until, timeZone)} 前不在岗，委托 ${delegate} 代为审批。`,
  homeDelegateHeader: '我不在时',
  homeDelegateNone: '要离开一段时间？可以在回来之前把发给你的新申请转给别人。',
  homeDelegateActive: (delegate, until, timeZone, waiting) =>
    `${shortDate('zh-CN', until, timeZone)} 前，新申请将发给 ${delegate}${
      waiting === 0 ? '。' : `；已在等待你的 ${waiting} 项仍由你审批（谁可以审批由审批系统决定）。`
    }`,
  delegateSet: '设置代理人',
  delegateChange: '修改',
  delegateClear: '取消代理',
  delegateModalTitle: '不在时的代理人',
  delegateToLabel: '把发给我的新申请转给',
  delegateUntilLabel: '截止日期（你回来的那天）',
  delegateHint: '已在等待你的申请仍由你审批：谁可以审批由审批系统决定。',
  delegateSave: '保存',
  delegateYourself: '不能把自己设为代理人，请选择其他人。',
  delegatePast: '请选择今天之后的日期。',
  delegateTooFar: '请选择一年之内的日期。',
  delegateDeactivated: (name) => `${name} 的 Slack 账号已停用，你的申请无法送达 TA；请选择其他人。`,
  delegateStillChecking: '仍在核对代理人，请稍后再按一次保存。尚未保存任何内容。',
  delegateUnknown: (name) => `审批系统中没有 ${name}，TA 无法审批你的申请；请选择其他人。`,
  delegateNoLogin: (name) => `应用找不到 ${name} 的审批系统账号；请选择其他人。`,
  delegateServiceDown: '暂时无法连接审批系统来核对代理人，请稍后再试。',
  delegateNoOwnLogin: '应用不知道你的审批系统账号，因此无法为你设置代理人。',
  delegateCouldNotSave: '代理人未能保存，请稍后再试。',
  reportRefused:
    '报告统计本工作区的所有审批，仅工作区管理员和所有者可查看。请联系他们，或由运维人员运行 `npm run report`。',
  reportUnsure: '暂时无法向 Slack 确认你是否为本工作区管理员，请稍后重试。',
  reportHeading: (days) => `*最近 ${days} 天发起的审批*（审批用时按工作时间计）`,
  reportTotal: (count, share, median, p90) =>
    `共 ${count} 项 · 已决定中同意占 ${share} · 中位数 ${median} · 90 分位 ${p90}`,
  reportOpen: (open, stale, bands) =>
    `仍待审批（不论何时发起）：${open} 项（${stale} 项超过一周）· 不到一天 ${bands[0]}，1–3 天 ${bands[1]}，3–7 天 ${bands[2]}，超过一周 ${bands[3]}`,
  reportSlowestApprovers: '*用时最长的审批人*',
  reportSlowestDepartments: '*用时最长的部门*',
  reportGroup: (group, decided, median, p90, open) =>
    `• ${group}：已决定 ${decided} 项，中位数 ${median}，90 分位 ${p90}，待审批 ${open} 项`,
  reportNone: '尚无已决定的审批。',
  reportHours: (hours) => (hours === null ? '–' : `${hours} 小时`),
  reportFailed: '无法生成报告：我们这边出了点问题。',
};

const MESSAGES: Record<Language, Messages> = { en, zh };

export function messagesFor(locale: string | undefined): Messages {
  return MESSAGES[languageOf(locale)];
}

export function messagesIn(language: Language): Messages {
  return MESSAGES[language];
}
