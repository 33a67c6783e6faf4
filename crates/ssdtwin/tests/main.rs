//! Integration tests of the simulator, one module per topic.

mod common;
mod determinism;
mod device;
mod entry;
mod fio;
mod fio_control;
mod fio_distributions;
mod gc;
mod hybrid;
mod integrity;
mod layout;
mod lifetime;
mod mapcache;
mod media;
mod power;
mod slc;
mod states;
mod suites;
mod synthetic;
mod thermal;
mod timing;
mod trace_dependent;
mod trace_formats;
mod trace_replay;
mod waf;
mod wear;
