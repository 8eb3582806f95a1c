/**
 * The console's route table, loaded at run time: the console is typechecked by its own tsconfig
 * (bundler resolution), so the server's typecheck does not follow this import.
 */
export interface ConsolePage {
  path: string;
  title: string;
  section: string;
  anyScope?: readonly string[];
  hidden?: boolean;
  load: () => Promise<unknown>;
}

const ROUTE_TABLE: string = '../../packages/console/src/pages/index.ts';

export async function consolePages(): Promise<readonly ConsolePage[]> {
  return ((await import(ROUTE_TABLE)) as { PAGES: readonly ConsolePage[] }).PAGES;
}
