export type { ForwarderOptions } from './forwarder.js';
export type { GatewayLogger, GatewayLogRecord, LogFormat, VerdictLogging } from './gateway-log.js';
export { formatLogRecord } from './gateway-log.js';
export { PrometheusRegistry } from './prometheus-registry.js';
export type { Listen, RunningGateway, StartGatewayOptions } from './start-gateway.js';
export { startGateway } from './start-gateway.js';
export type { IngestResult, ToolwatchGatewayOptions } from './toolwatch-gateway.js';
export { ToolwatchGateway } from './toolwatch-gateway.js';
export type { Completion } from './trace-assembler.js';
