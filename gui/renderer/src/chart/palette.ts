// The chart's colours, one place: event classes for bars, series colours for summarised columns, marks.
import type { EventClass } from '../../../../analysis/event-detail.js';

export const CLASS_COLOURS: Record<EventClass, string> = {
  alloc: '#d9480f',
  free: '#2f9e44',
  call: '#1c7ed6',
  return: '#7048e8',
  other: '#868e96',
};

export const CLASS_LABELS: Record<EventClass, string> = {
  alloc: 'allocation',
  free: 'free',
  call: 'call',
  return: 'return',
  other: 'thread start or end, static object, the run’s end',
};

export const SERIES_COLOURS = {
  stack: '#74c0fc',
  stackMin: '#339af0',
  static: '#fcc419',
  heap: '#ffa94d',
  heapMin: '#f76707',
};

export const MARK_COLOURS = {
  selected: '#111111',
  related: '#e64980',
  /** A linked block the selected free orphaned: never freed afterwards, so apart from the blocks it released. */
  orphaned: '#9c36b5',
  highlight: '#f08c00',
  budget: '#c92a2a',
  exceeded: 'rgba(250, 82, 82, 0.13)',
  axis: '#495057',
};
