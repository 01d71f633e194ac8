/** The NATS adapters (JetStream job bus, core-NATS event bus) and their connection factory. */
export { connectNats } from './connect-nats.ts';
export { JetStreamJobBus, type JetStreamJobBusOptions } from './jetstream-job-bus.ts';
export { NatsEventBus, type NatsEventBusOptions } from './nats-event-bus.ts';
