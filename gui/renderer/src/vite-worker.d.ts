// The type of Vite's `?worker&inline` imports (the renderer's tsconfig loads no vite/client types).
declare module '*?worker&inline' {
  const WorkerConstructor: new () => Worker;
  export default WorkerConstructor;
}
