/** A drill-in as a console address: the service names console pages from `/`; `/console` is the frame's own prefix. */
export const consolePath = (drillIn: string) => drillIn.replace(/^\/console(?=\/|$)/, '') || '/';
