/** The approval's lifecycle: events, their transitions, and the rules that decide them. */
export * from './check-outcome.ts';
export * from './deliveries.ts';
export * from './events.ts';
export * from './reminders.ts';
export * from './transition.ts';
