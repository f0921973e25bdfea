// The deepest stack observed (report --stack): the first frame entered at the largest depth, and the frames open
// above it — also when the deepest path leaves the previous deepest one part-way, and through a recursion whose every
// call is a new deepest frame.
import { describe, expect, it } from 'vitest';
import { deepestStack } from '../../analysis/deepest-stack.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { studentMain } from '../fixtures/scenarios.js';

const names = (model: ReturnType<typeof decodeTrace>) => deepestStack(model, 64).path.map((s) => `${s.function}@${s.depthBytes}`);

describe('deepestStack', () => {
  it('follows a new deepest path that parts from the old one below its end', () => {
    // main → make_node → make_node (depth 320), back to main, then main → worker → make_node → make_node (depth 400).
    const { b, t } = studentMain();
    t.enter(3, 192);
    t.enter(3, 320);
    t.exit(5);
    t.exit(5);
    t.enter(10, 200);
    t.enter(3, 300);
    t.enter(3, 400);
    t.exit(5);
    t.exit(5);
    t.exit(11);
    t.exit(2);
    t.end(0, 0);
    const model = decodeTrace(b.build());
    expect(names(model)).toEqual(['main@128', 'worker@200', 'make_node@300', 'make_node@400']);
    const d = deepestStack(model, 64);
    expect({ depth: d.depthBytes, fromMain: d.fromMainBytes, thread: d.thread }).toEqual({ depth: 400, fromMain: 400 - 128 + 64, thread: 0 });
  });

  it('keeps the first frame on a tie, and every frame of a deep recursion', () => {
    const { b, t } = studentMain();
    for (let i = 1; i <= 2000; i++) t.enter(3, 128 + 16 * i);
    t.unwind(2000);
    t.enter(10, 128 + 16 * 2000);
    t.exit(11);
    t.exit(2);
    t.end(0, 0);
    const model = decodeTrace(b.build());
    const d = deepestStack(model, null);
    expect(d.path.length).toBe(2001);
    expect(d.path[2000]!.function).toBe('make_node');
    expect(d.path.every((s, i) => s.depthBytes === 128 + 16 * i)).toBe(true);
    expect(d.fromMainBytes).toBe(null);
  });
});
