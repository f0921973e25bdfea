// Vitest 5's failure reporter calls Map.groupBy, which Node 20 lacks; without
// this a failing test would crash the reporter and hide its own error.
type GroupBy = <K, T>(items: Iterable<T>, key: (item: T, index: number) => K) => Map<K, T[]>;

export default function setup(): void {
  const map = Map as unknown as { groupBy?: GroupBy };
  if (map.groupBy) return;
  map.groupBy = <K, T>(items: Iterable<T>, key: (item: T, index: number) => K) => {
    const groups = new Map<K, T[]>();
    let index = 0;
    for (const item of items) {
      const k = key(item, index++);
      const group = groups.get(k);
      if (group) group.push(item);
      else groups.set(k, [item]);
    }
    return groups;
  };
}
