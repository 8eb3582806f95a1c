export { caddyParser, type CaddyOptions } from './caddy.ts';
export { apacheLogFormat, COMBINED, compileLogFormat, JA4_VARIABLES, type LineParser, type LogFormatOptions, tokenizeLogFormat } from './log-format.ts';
export { type FilePosition, lineId, loadPosition, positionFile, savePosition } from './position.ts';
export { clfTime, eventOf, type LoggedRequest, unescapeLogged } from './record.ts';
export { createShipper, type FormatOptions, type LogFormatName, parserFor, type Shipper, type ShipperOptions, type ShipperStats } from './shipper.ts';
export { createTailer, type TailedLine, type Tailer, type TailerCounters, type TailerOptions } from './tailer.ts';
