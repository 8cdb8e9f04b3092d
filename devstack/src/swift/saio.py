#!/usr/bin/python3
"""Helpers for a throw-away, single-node, loopback-only OpenStack Swift + s3api (see swift.ts).

  saio.py rings SWIFT_DIR ACCOUNT_PORT CONTAINER_PORT OBJECT_PORT
      Builds 1-replica, 1-device rings in one process (9 swift-ring-builder runs cost ~5 s).
  saio.py serve {account|container|object|proxy}-server CONF
      Runs one Swift WSGI server in the foreground (workers = 0: no fork), reading swift.conf
      from $SAIO_SWIFT_DIR instead of the hard-coded /etc/swift/swift.conf. The proxy first
      builds the rings if they are missing, from $SAIO_RING_PORTS ("account,container,object"):
      only the proxy reads them, and that saves an interpreter start. The server dies
      with the process that started it (PR_SET_PDEATHSIG), because Swift calls setsid() and
      so leaves the caller's process group: a crashed test runner must not leak it.

The proxy pipeline loads `memcache_filter_factory` from this module (found via PYTHONPATH):
tempauth refuses to run without env['swift.cache'], and this in-process dict replaces memcached.
Run it with Debian's /usr/bin/python3, where python3-swift lives.
"""
import json
import os
import sys
import threading
import time as _time


def build_rings(swift_dir, account_port, container_port, object_port):
    from swift.common.ring import RingBuilder

    ports = (('account', account_port), ('container', container_port), ('object', object_port))
    for name, port in ports:
        builder = RingBuilder(10, 1, 1)  # part_power 10, 1 replica, min_part_hours 1
        builder.add_dev({'id': 0, 'region': 1, 'zone': 1, 'ip': '127.0.0.1',
                         'port': int(port), 'device': 'd1', 'weight': 1})
        builder.rebalance()
        builder.save(os.path.join(swift_dir, name + '.builder'))
        builder.get_ring().save(os.path.join(swift_dir, name + '.ring.gz'))


def die_with_parent(parent_pid):
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # The parent may have died before prctl: then we were reparented already.
    if os.getppid() != parent_pid:
        os._exit(1)


def serve(server, conf_file):
    die_with_parent(int(os.environ['SAIO_PARENT_PID']))
    from swift.common import utils
    utils.SWIFT_CONF_FILE = os.path.join(os.environ['SAIO_SWIFT_DIR'], 'swift.conf')
    utils.HASH_PATH_PREFIX = utils.HASH_PATH_SUFFIX = b''
    utils.validate_configuration()
    from swift.common import constraints, storage_policy
    storage_policy.reload_storage_policies()
    constraints.reload_constraints()
    from swift.common.wsgi import run_wsgi

    swift_dir = os.environ['SAIO_SWIFT_DIR']
    ring_ports = os.environ.get('SAIO_RING_PORTS')
    if (server == 'proxy-server' and ring_ports and
            not os.path.exists(os.path.join(swift_dir, 'object.ring.gz'))):
        build_rings(swift_dir, *ring_ports.split(','))

    # verbose: every Swift logger also writes to stderr, which the harness sends to a file
    # (there is no syslog here; without it Swift logs to UDP localhost:514).
    kwargs = {'verbose': True}
    if server == 'object-server':
        from swift.obj import server as objserver
        kwargs['global_conf_callback'] = objserver.global_conf_callback
    return run_wsgi(conf_file, server, **kwargs)


class DictCache(object):
    """The subset of swift.common.memcached.MemcacheRing the proxy and its middlewares use;
    values are JSON round-tripped like the real client does."""

    def __init__(self):
        self._d = {}
        self._lock = threading.Lock()

    def _alive(self, key):
        item = self._d.get(key)
        if item is None:
            return None
        if item[0] and item[0] < _time.time():
            self._d.pop(key, None)
            return None
        return item

    @staticmethod
    def _exp(time):
        if not time:
            return 0
        # memcache semantics: more than 30 days means an absolute timestamp
        return time if time > 30 * 24 * 3600 else _time.time() + time

    def get(self, key, raise_on_error=False):
        with self._lock:
            item = self._alive(key)
        return None if item is None else json.loads(item[1])

    def set(self, key, value, serialize=True, time=0, min_compress_len=0, raise_on_error=False):
        with self._lock:
            self._d[key] = (self._exp(time), json.dumps(value))

    def incr(self, key, delta=1, time=0):
        with self._lock:
            item = self._alive(key)
            value = max(0, (int(json.loads(item[1])) if item else 0) + int(delta))
            self._d[key] = (item[0] if item else self._exp(time), json.dumps(value))
            return value

    def decr(self, key, delta=1, time=0):
        return self.incr(key, -int(delta), time)

    def delete(self, key, server_key=None):
        with self._lock:
            self._d.pop(key, None)

    def set_multi(self, mapping, server_key, serialize=True, time=0, min_compress_len=0):
        for key, value in mapping.items():
            self.set(key, value, time=time)

    def get_multi(self, keys, server_key):
        return [self.get(key) for key in keys]


def memcache_filter_factory(global_conf, **local_conf):
    cache = DictCache()

    def cache_filter(app):
        def middleware(env, start_response):
            env['swift.cache'] = cache
            return app(env, start_response)
        return middleware
    return cache_filter


if __name__ == '__main__':
    if len(sys.argv) == 6 and sys.argv[1] == 'rings':
        build_rings(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'serve':
        sys.exit(serve(sys.argv[2], sys.argv[3]))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
