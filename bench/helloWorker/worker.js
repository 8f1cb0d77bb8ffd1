export default {
  fetch() {
    return new Response("hello");
  },
};
